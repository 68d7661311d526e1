"""Cutting the shipped everyday-text KB, and its entity index, out of a large KB and that KB's index.

The rule (models/entqa-minilm/kb/README.md): count for every entity how many *other* entries' descriptions
name it — by its title without a trailing "(qualifier)", or that without a company or club suffix ("HSBC
Holdings" → "HSBC", "Arsenal F.C." → "Arsenal"); case-sensitive (so capitalised, as names are written),
between word boundaries, longest match first — an in-link popularity proxy computable from the KB alone;
keep those named at least `min_named` times, plus every entry with both a Wikidata id and a description
(the FB15k-237 entities that made up the earlier 13.5k demo KB).

    python -m annotator.kb.cut --kb ../shared/data/kb/entities.jsonl.gz --out-kb DIR/entities.jsonl.gz \\
        --min-named 2 --parent-index ~/.cache/entqa/indexes/ID --out-index DIR/index
"""
from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import ahocorasick
import numpy as np

from annotator.data_types import Entity
from annotator.entity_index import MANIFEST, write_compact_vectors
from annotator.errors import ConfigError
from annotator.kb.reading import kb_fingerprint, read_kb
from annotator.kb.titles import without_qualifier

# How articles on companies and clubs are titled but seldom named in running text.
_SUFFIX = re.compile(r",? (?:Holdings|Group|plc|PLC|Inc\.?|Corporation|Corp\.|Company|Limited|Ltd\.?|LLC|AG|SE|"
                     r"S\.A\.|N\.V\.|A\.F\.C\.|F\.C\.|FC|AFC)$")


def surface_forms(title: str) -> set[str]:
    """How text names an entity: its title without a trailing "(qualifier)", and that without a company or
    club suffix when it has one."""
    name = without_qualifier(title)
    return {name, _SUFFIX.sub("", name)} - {""}


def name_counts(entities: Sequence[Entity]) -> np.ndarray:
    """For each entity, how many other entries' descriptions name one of its surface forms (see the module doc).

    Only capitalised surface forms of two characters or more are looked for; entities sharing a surface
    form are all named by it (the text does not say which one it means).
    """
    named_by: dict[str, list[int]] = collections.defaultdict(list)
    for row, entity in enumerate(entities):
        for surface in surface_forms(entity.title):
            if len(surface) >= 2 and surface[0].isupper():
                named_by[surface].append(row)
    automaton = ahocorasick.Automaton()
    for surface in named_by:
        automaton.add_word(surface, surface)
    automaton.make_automaton()
    counts = np.zeros(len(entities), dtype=np.int64)
    for row, entity in enumerate(entities):
        if entity.text:
            rows = {r for surface in _names_in(entity.text, automaton) for r in named_by[surface]}
            rows.discard(row)
            counts[list(rows)] += 1
    return counts


def _names_in(text: str, automaton: ahocorasick.Automaton) -> set[str]:
    found = set()
    for end, surface in automaton.iter_long(text):
        start = end - len(surface) + 1
        before = text[start - 1] if start else " "
        after = text[end + 1] if end + 1 < len(text) else " "
        if not before.isalnum() and not after.isalnum():
            found.add(surface)
    return found


def select_rows(entities: Sequence[Entity], counts: np.ndarray, *, min_named: int) -> np.ndarray:
    """KB rows (ascending) of the entities named at least `min_named` times or with a Wikidata id and a description."""
    return np.array([row for row, (e, n) in enumerate(zip(entities, counts))
                     if n >= min_named or (e.qid and e.text)], dtype=np.int64)


def write_kb(entities: Sequence[Entity], rows: np.ndarray, path: str | Path) -> None:
    """The selected entries as shared-format JSON lines, gzip without name or time (byte-identical rebuilds)."""
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
        for row in rows:
            e = entities[row]
            line = json.dumps({"title": e.title, "text": e.text, "qid": e.qid}, ensure_ascii=False)
            packed.write((line + "\n").encode("utf-8"))


def cut_index(parent: str | Path, rows: np.ndarray, *, full_kb: str | Path, kb_path: str | Path,
              out: str | Path) -> None:
    """The index folder of the cut KB `kb_path`, from the rows of `full_kb`'s index folder `parent`.

    An entity's ids and vector depend only on its title, description and the checkpoint, so the rows are
    copied rather than re-encoded; the manifest keeps the parent's checkpoint and config and names the cut KB.
    The vectors are stored as 8-bit scalar codes (`write_compact_vectors`).

    Raises:
        ConfigError: `parent` is not a finished index folder of `full_kb`.
    """
    parent, out = Path(parent), Path(out)
    manifest = json.loads((parent / MANIFEST).read_text(encoding="utf-8")) if (parent / MANIFEST).is_file() else {}
    if not manifest.get("complete"):
        raise ConfigError(f"{parent} holds no finished entity index (build it with python -m annotator.entity_index)")
    if manifest["identity"]["kb_fingerprint"] != kb_fingerprint(full_kb) or manifest["identity"]["kb_limit"]:
        raise ConfigError(f"{parent} is not the whole index of {full_kb}; its rows would not be the KB's")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in ("titles.txt", "qids.txt"):
        lines = (parent / name).read_text(encoding="utf-8").split("\n")[:-1]
        (out / name).write_text("".join(lines[r] + "\n" for r in rows), encoding="utf-8")
    for name in ("entity_ids.npy", "entity_lengths.npy"):
        np.save(out / name, np.asarray(np.load(parent / name, mmap_mode="r")[rows]))
    write_compact_vectors(out, np.asarray(np.load(parent / "embeddings.npy", mmap_mode="r")[rows]))
    identity = dict(manifest["identity"], kb_fingerprint=kb_fingerprint(kb_path), kb_limit=None)
    cut = dict(manifest, identity=identity, rows=len(rows), cut_from=manifest["identity"]["kb_fingerprint"])
    (out / MANIFEST).write_text(json.dumps(cut, indent=2) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m annotator.kb.cut", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", required=True, help="the full KB (shared format JSON lines)")
    parser.add_argument("--out-kb", required=True, help="the cut KB to write (.jsonl.gz)")
    parser.add_argument("--min-named", type=int, default=2,
                        help="keep entities named in at least this many other descriptions (default 2)")
    parser.add_argument("--parent-index", help="the full KB's finished index folder, to cut the index from")
    parser.add_argument("--out-index", help="the cut KB's index folder to write (needs --parent-index)")
    args = parser.parse_args(argv)
    if bool(args.parent_index) != bool(args.out_index):
        parser.error("--parent-index and --out-index go together")
    entities = list(read_kb(args.kb))
    counts = name_counts(entities)
    rows = select_rows(entities, counts, min_named=args.min_named)
    write_kb(entities, rows, args.out_kb)
    described = sum(bool(entities[r].text) for r in rows)
    print(f"{len(rows):,} entities ({described:,} described; {int((counts[rows] < args.min_named).sum()):,} "
          f"kept for their Wikidata id) -> {args.out_kb}")
    if args.out_index:
        cut_index(args.parent_index, rows, full_kb=args.kb, kb_path=args.out_kb, out=args.out_index)
        print(f"index -> {args.out_index}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
