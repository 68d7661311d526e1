"""Does a change keep the linker's answers? Dump every document's mentions (A2KB and D2KB at the gold spans)
before and after, then compare the dumps.

    python -m bench.same_links dump --kb ../shared/data/kb/entities.jsonl.gz --out before.json
    python -m bench.same_links compare before.json after.json

`compare` prints how many documents and mentions differ per task (a mention differs when its span, title or
score does; scores are compared to 1e-6) and exits 1 when any do.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from annotator import DEFAULT_MODEL_DIR
from gerbil.datasets import load_dataset
from annotator.settings import LinkerSettings, settings_from_variables

TASKS = ("A2KB", "D2KB")
SCORE_TOLERANCE = 1e-6


def dump(*, model: Path, kb: Path | None, dataset: Path, settings: LinkerSettings, out: Path,
         limit: int | None) -> None:
    """Link every document of `dataset` in both tasks, one document per call, and write the mentions."""
    from annotator import Linker

    linker = Linker.from_pretrained(model, kb_path=kb, config_overrides=settings.model, runtime=settings.runtime)
    documents = load_dataset("dataset", str(dataset)).documents[:limit]
    answers: dict[str, dict[str, list[list[Any]]]] = {task: {} for task in TASKS}
    for document in tqdm(documents, desc="documents", unit="doc"):
        spans = [(a.start, a.end) for a in document.annotations]
        for task, given in (("A2KB", None), ("D2KB", spans)):
            answers[task][document.uri] = [[m.start, m.end, m.title, m.score] for m in linker.link(document.text, given)]
    out.write_text(json.dumps({"linker": linker.describe(), "answers": answers}, indent=1) + "\n", encoding="utf-8")


def differences(before: dict[str, list[list[Any]]], after: dict[str, list[list[Any]]]) -> tuple[int, int, int]:
    """(documents that differ, mentions before that have no equal after, mentions before) for one task."""
    documents = changed = total = 0
    for uri, old in before.items():
        new = after.get(uri, [])
        unmatched = sum(not any(_same(o, n) for n in new) for o in old) + max(0, len(new) - len(old))
        documents += bool(unmatched)
        changed += unmatched
        total += len(old)
    return documents, changed, total


def _same(old: Sequence[Any], new: Sequence[Any]) -> bool:
    return old[:3] == new[:3] and abs(old[3] - new[3]) <= SCORE_TOLERANCE


def compare(before_path: Path, after_path: Path) -> bool:
    """Print the differences per task; True when there are none."""
    before, after = (json.loads(p.read_text(encoding="utf-8"))["answers"] for p in (before_path, after_path))
    same = True
    for task in TASKS:
        documents, changed, total = differences(before[task], after[task])
        print(f"{task}: {len(before[task])} documents, {documents} differ; {changed} of {total} mentions differ")
        same &= documents == 0 and len(before[task]) == len(after[task])
    return same


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump", help="link a dataset in A2KB and D2KB and write the mentions")
    dumping.add_argument("--model", type=Path, default=DEFAULT_MODEL_DIR)
    dumping.add_argument("--kb", type=Path, help="KB file (default: the model's embedded KB)")
    dumping.add_argument("--dataset", type=Path, default=Path("../shared/data/aida/dev.ttl"))
    dumping.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                         help="a linker setting over the ENTQA_* variables, e.g. --set cpu_precision=fp32 (repeatable)")
    dumping.add_argument("--limit", type=int, help="only the first N documents")
    dumping.add_argument("--out", type=Path, required=True)
    comparing = commands.add_parser("compare", help="compare two dumps; exit 1 when they differ")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "dump":
        dump(model=args.model, kb=args.kb, dataset=args.dataset,
             settings=settings_from_variables(os.environ, assignments=args.settings), out=args.out, limit=args.limit)
        return 0
    return 0 if compare(args.before, args.after) else 1


if __name__ == "__main__":
    sys.exit(main())
