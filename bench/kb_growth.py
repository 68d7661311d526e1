"""Bench: how fast a KB grows. Adds made-up entities (names of invented syllables, so that no text names them) to a
copy of a KB with `entqa kb add`'s editor and times it, beside a full build's encoding rate measured in the same
run on the KB's first `--build-sample` entities and scaled to the whole KB.

    python -m bench.kb_growth --kb ../shared/data/kb/entities.jsonl.gz --sizes 1000 10000 --keep /tmp/kb-1000 --reload

The copy keeps the KB's fingerprint, so its cached index is the one the linker uses for the KB itself (built first
when missing). `--keep DIR` keeps the copy changed by the first size, for comparing links and recall before and
after (bench.same_links, bench.dev_recall); `--reload` times what a running service does then (`Linker.reloaded`:
the same models, the index and the segment, every stage built again). Prints one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from annotator import DEFAULT_MODEL_DIR
from annotator.data_types import Entity
from annotator.entity_index.build import build_folder
from annotator.kb.editing import KBEditor
from annotator.pipeline.linker import Linker
from annotator.settings import settings_from_variables

_SYLLABLES = ["ka", "vor", "li", "zen", "qua", "mer", "tho", "ril", "sab", "on", "dru", "fel", "yat", "ux", "bel"]
_KINDS = ["glassworks", "river ferry", "chess club", "weather station", "folk band", "seed bank", "lighthouse",
          "cycling team", "printing house", "orchard"]


def made_up_entities(count: int, seed: int) -> list[Entity]:
    """`count` entities with invented names and one-sentence descriptions, distinct titles."""
    rng = random.Random(seed)
    entities: dict[str, Entity] = {}
    while len(entities) < count:
        name = " ".join("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
                        for _ in range(2))
        town = "".join(rng.choice(_SYLLABLES) for _ in range(3)).capitalize()
        entities.setdefault(name, Entity(name, f"{name} is a made-up {rng.choice(_KINDS)} in the invented town of "
                                               f"{town}, described only to measure how a KB grows."))
    return list(entities.values())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL_DIR)
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000], help="entities added, each to a fresh copy")
    parser.add_argument("--build-sample", type=int, default=2000, help="entities of the KB encoded as a full build would")
    parser.add_argument("--keep", type=Path, help="keep the copy changed by the first size in this folder")
    parser.add_argument("--reload", action="store_true",
                        help="also time a served linker's reload (Linker.reloaded) after the first size's add")
    args = parser.parse_args(argv)
    runtime = settings_from_variables(os.environ).runtime
    figures: dict[str, object] = {"kb": str(args.kb), "model": str(args.model), "cpu_threads": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="kb-growth-") as scratch:
        for position, size in enumerate(args.sizes):
            folder = args.keep if position == 0 and args.keep else Path(scratch) / f"kb-{size}"
            folder.mkdir(parents=True, exist_ok=True)
            kb = Path(shutil.copy(args.kb, folder / args.kb.name))
            served = (Linker.from_pretrained(args.model, kb_path=kb, runtime=runtime)
                      if args.reload and position == 0 else None)
            started = time.perf_counter()
            editor = KBEditor.open(args.model, kb, runtime=runtime)
            opened = time.perf_counter()
            editor.add(made_up_entities(size, seed=time.time_ns()))  # new names each run: no segment cached before
            added = time.perf_counter()
            figures[f"add_{size}"] = {"open_s": round(opened - started, 1), "add_s": round(added - opened, 1),
                                      "entities_per_s": round(size / (added - opened), 1)}
            if served is not None:
                started = time.perf_counter()
                reloaded = served.reloaded()
                figures["reload_s"] = round(time.perf_counter() - started, 1)
                assert len(reloaded.index) == len(served.index) + size
                del served, reloaded
        base = Path(scratch) / "sample-build"
        started = time.perf_counter()
        build_folder(base, kb_path=args.kb, encoder=editor.models.kb_encoder(), builder=editor.models.builder,
                     checkpoint_id=editor.models.checkpoint_id, index_type="flat", limit=args.build_sample,
                     batch_size=runtime.batch_sizes(editor.models.device.type)[1])
        rate = args.build_sample / (time.perf_counter() - started)
        entities = len(editor.entries.titles)
        figures["full_build"] = {"sample": args.build_sample, "entities_per_s": round(rate, 1),
                                 "kb_entities": entities, "scaled_s": round(entities / rate, 1)}
        for size in args.sizes:
            figures[f"add_{size}"]["full_build_over_add"] = round(  # type: ignore[index]
                entities / rate / figures[f"add_{size}"]["add_s"], 1)  # type: ignore[index]
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
