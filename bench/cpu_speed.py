"""Bench (issue 78): documents per second on the CPU, baseline commit against this tree, in the same run.

Each side links the same documents in its own process, one document per call, end to end (A2KB), after a warm-up
document; the baseline is another worktree's code (default /work/wt-base, commit 2c253ab) run with this script on
its PYTHONPATH, then this tree's. Each side is one process that loads the KB once and links every set; the sides run one after another.
It prints each side's docs/s, the ratio, and how many (passage, candidate) pairs the reader read.

    python -m bench.cpu_speed --kb ../shared/data/kb/entities.jsonl.gz --sets aida/dev.ttl ood-dev/ace2004.ttl \\
        --docs 40 --baseline /work/wt-base --variant shipped --variant full=name_test=false,stride=16

F1 is the dev suite's (`python -m gerbil.dev_suite`), run for each side; docs/results/cpu-speed-2026-12-07.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def worker(args: argparse.Namespace) -> int:
    """Link the documents here and print one JSON line: documents, seconds, pairs read, the code's root."""
    import annotator
    from annotator import Linker
    from annotator.settings import settings_from_variables
    from gerbil.datasets import load_dataset

    settings = settings_from_variables(os.environ, assignments=args.settings)
    linker = Linker.from_pretrained(args.model, kb_path=args.kb, config_overrides=settings.model,
                                    runtime=settings.runtime)
    pairs = [0]
    score_pairs = type(linker.reading)._score_pairs

    def counting(self, batch, width):  # every reading's pairs: the first pass and the post-processors'
        pairs[0] += int(batch.input_ids.shape[0])
        return score_pairs(self, batch, width)

    type(linker.reading)._score_pairs = counting
    code = str(Path(annotator.__file__).resolve().parents[1])
    for dataset in args.dataset:
        texts = [d.text for d in load_dataset("set", str(dataset)).documents[:args.docs]]
        linker.link(texts[0])  # warm-up, untimed
        pairs[0] = 0
        began = time.perf_counter()
        for text in texts:
            linker.link(text)
        seconds = time.perf_counter() - began
        print(json.dumps({"set": str(dataset), "documents": len(texts), "seconds": seconds, "pairs": pairs[0],
                          "code": code}), flush=True)
    return 0


def run_side(root: Path, args: argparse.Namespace, datasets: Sequence[Path], settings: Sequence[str]) -> list[dict]:
    # each side its own checkpoint folder: the same weights, the config.json its code reads
    model = root / args.model.relative_to(HERE) if args.model.is_relative_to(HERE) else args.model
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", "--model", str(model), "--kb",
               str(args.kb.resolve()), *(["--docs", str(args.docs)] if args.docs else []), "--dataset", *(str(d.resolve()) for d in datasets)]
    for setting in settings:
        command += ["--set", setting]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{root}'s side failed:\n{done.stderr[-3000:]}")
    out = done.stdout
    results = [json.loads(line) for line in out.strip().splitlines() if line.startswith("{")]
    if any(Path(result["code"]) != root.resolve() for result in results):
        raise SystemExit(f"{root}'s side imported its code from {results[0]['code']}")
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=HERE / "models" / "entqa-minilm")
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--sets", nargs="+", default=["aida/dev.ttl", "ood-dev/ace2004.ttl", "ood-dev/spotlight.ttl",
                                                       "ood-dev/oke2016-train.ttl"])
    parser.add_argument("--docs", type=int, default=None, help="the first N documents of each set (default: all)")
    parser.add_argument("--baseline", type=Path, default=Path("/work/wt-base"))
    parser.add_argument("--variant", action="append", default=[], metavar="LABEL[=NAME=VALUE,...]",
                        help="a run of this tree with these settings (repeatable; default: one, its defaults)")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dataset", type=Path, nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    args.model = args.model.resolve()
    variants = {"this": []}
    if args.variant:
        variants = {}
        for text in args.variant:
            label, _, settings = text.partition("=")
            variants[label] = [s for s in settings.split(",") if s]
    sides = ["base", *variants]
    datasets = [args.data / name for name in args.sets]
    # one process per side, the sides one after another, each loading the KB once
    results = {"base": run_side(args.baseline.resolve(), args, datasets, [])}
    for label, settings in variants.items():
        results[label] = run_side(HERE, args, datasets, settings)
    print(f"{'set':26} {'side':14} {'docs':>5} {'docs/s':>8} {'ratio':>6} {'pairs':>9}")
    totals = {side: [0, 0.0, 0] for side in sides}
    for i, name in enumerate(args.sets):
        base_rate = results["base"][i]["documents"] / results["base"][i]["seconds"]
        for side in sides:
            result = results[side][i]
            for j, key in enumerate(("documents", "seconds", "pairs")):
                totals[side][j] += result[key]
            rate = result["documents"] / result["seconds"]
            print(f"{name:26} {side:14} {result['documents']:>5} {rate:>8.3f} {rate / base_rate:>6.2f} "
                  f"{result['pairs']:>9}")
    base_rate = totals["base"][0] / totals["base"][1]
    for side in sides:
        rate = totals[side][0] / totals[side][1]
        print(f"{'all':26} {side:14} {totals[side][0]:>5} {rate:>8.3f} {rate / base_rate:>6.2f} {totals[side][2]:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
