"""Bench: the share of a dataset's InKB gold that a KB holds by title, for several KBs side by side.

A gold mention is InKB when its URI set, expanded through the file's own `owl:sameAs` links (OKE) as GERBIL
does, reaches a DBpedia resource; it is held by a KB when one of those DBpedia titles is a KB title
(exact title, no redirects). Distinct entities are distinct expanded title sets. Prints figures only.

    python -m bench.kb_coverage --kb full=../shared/data/kb/entities.jsonl.gz \\
        --kb shipped=models/entqa-minilm/kb/entities.jsonl.gz \\
        --dataset AIDA-A=../shared/data/aida/dev.ttl --dataset ace2004=../shared/data/ood-dev/ace2004.ttl
"""
from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence

from annotator.kb.reading import read_kb
from annotator.uris import title_from_uri
from gerbil.datasets import Dataset, load_dataset
from gerbil.uris import is_in_kb

_DBPEDIA = "http://dbpedia.org/resource/"


def gold_title_sets(dataset: Dataset) -> list[frozenset[str]]:
    """For each InKB gold mention, the DBpedia titles its expanded URI set reaches."""
    expander = dataset.expander()
    golds = []
    for document in dataset.documents:
        for annotation in document.annotations:
            uris = expander.expand(annotation.uris)
            if is_in_kb(uris):
                titles = (title_from_uri(u) for u in uris if u.startswith(_DBPEDIA))
                golds.append(frozenset(t[:1].upper() + t[1:] for t in titles))  # as the KB spells titles
    return golds


def held_share(golds: Sequence[frozenset[str]], titles: set[str]) -> tuple[float, float]:
    """(share of mentions, share of distinct entities) with a title in `titles`, in percent."""
    distinct = set(golds)
    mentions = sum(not gold.isdisjoint(titles) for gold in golds)
    entities = sum(not gold.isdisjoint(titles) for gold in distinct)
    return 100 * mentions / max(len(golds), 1), 100 * entities / max(len(distinct), 1)


def _named(pairs: Iterable[str], option: str) -> list[tuple[str, str]]:
    named = []
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep:
            raise SystemExit(f"{option} takes NAME=PATH, not {pair!r}")
        named.append((name, path))
    return named


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", action="append", required=True, help="NAME=PATH of a KB (repeat)")
    parser.add_argument("--dataset", action="append", required=True, help="NAME=PATH of a NIF dataset (repeat)")
    args = parser.parse_args(argv)
    kbs = [(name, {e.title for e in read_kb(path)}) for name, path in _named(args.kb, "--kb")]
    header = " | ".join(f"{name} mentions | {name} entities" for name, _ in kbs)
    print(f"| dataset | InKB mentions | distinct entities | {header} |")
    print("|---|---|---|" + "---|---|" * len(kbs))
    for name, path in _named(args.dataset, "--dataset"):
        golds = gold_title_sets(load_dataset(name, path))
        shares = " | ".join("{:.1f} % | {:.1f} %".format(*held_share(golds, titles)) for _, titles in kbs)
        print(f"| {name} | {len(golds):,} | {len(set(golds)):,} | {shares} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
