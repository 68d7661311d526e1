"""Bench: end-to-end InKB P/R/F1 (GERBIL strong match) against the span threshold γ, from one pass.

The linker runs once over the dataset at the lowest γ, keeping every mention's score (p_rerank × p_span);
each higher γ then keeps the mentions scored above it. That equals running at that γ: decoding keeps a
passage's best spans above the threshold and merging resolves overlaps best-scored first, so a higher γ
only removes mentions. The second stage (`document_candidates`) and `short_names` are off here: both build on
what the first pass linked, so a lower γ would change what they add. Tune γ on dev (the paper did), never on a test set.

    python -m bench.threshold_sweep --model models/entqa-minilm --kb ../shared/data/kb/entities.jsonl.gz \
        --dataset ../shared/data/aida/dev.ttl --thresholds 0.003 0.005 0.01 0.02 0.05 0.1
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from tqdm.auto import tqdm

from annotator.pipeline.linker import Linker
from gerbil.client import Answer, InProcessAnnotator, Task
from gerbil.datasets import load_nif
from gerbil.experiment import evaluate

REPOSITORY = Path(__file__).resolve().parents[1]


def above(answer: Answer, threshold: float) -> Answer:
    """The answer's annotations scored above `threshold` (strictly, as the linker's γ), without scores (so
    that the evaluation runs no threshold search of its own)."""
    kept = tuple(dataclasses.replace(a, confidence=None) for a in answer.annotations if a.confidence > threshold)
    return dataclasses.replace(answer, annotations=kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPOSITORY / "models" / "entqa-minilm"), help="checkpoint folder")
    parser.add_argument("--kb", help="KB file (default: the checkpoint's demo KB)")
    parser.add_argument("--dataset", required=True, type=Path, help="NIF corpus with gold annotations")
    parser.add_argument("--docs", type=int, help="only the first N documents")
    parser.add_argument("--k", type=int, help="candidates per passage (default: the checkpoint's)")
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.005, 0.01, 0.02, 0.05, 0.1])
    parser.add_argument("--out", type=Path, help="write the figures to this JSON file")
    args = parser.parse_args()

    thresholds = sorted(args.thresholds)
    overrides = {"threshold": thresholds[0], "document_candidates": False, "short_names": False,
                 **({"top_k": args.k} if args.k else {})}
    linker = Linker.from_pretrained(args.model, kb_path=args.kb, config_overrides=overrides)
    dataset = load_nif(args.dataset, name=args.dataset.stem)
    dataset = dataclasses.replace(dataset, documents=dataset.documents[: args.docs])
    annotator = InProcessAnnotator(linker, with_confidence=True)
    answers = [annotator.annotate(document, task=Task.A2KB)
               for document in tqdm(dataset.documents, desc=f"linking at γ={thresholds[0]:g}", unit="doc")]

    print(f"{dataset.name}: {len(answers)} documents, K={linker.config.top_k}, {linker.describe()['device']}")
    print(f"{'γ':>8}{'mentions':>10}{'P':>8}{'R':>8}{'F1':>8}{'macro F1':>10}")
    figures = []
    for threshold in thresholds:
        kept = [above(answer, threshold) for answer in answers]
        scores = evaluate(dataset, kept, task=Task.A2KB)["inkb"]
        mentions = sum(len(a.annotations) for a in kept)
        figures.append({"threshold": threshold, "mentions": mentions,
                        **{f"micro_{k}": v for k, v in dataclasses.asdict(scores.micro).items()},
                        "macro_f1": scores.macro.f1})
        print(f"{threshold:>8g}{mentions:>10}{100 * scores.micro.precision:>8.1f}"
              f"{100 * scores.micro.recall:>8.1f}{100 * scores.micro.f1:>8.1f}{100 * scores.macro.f1:>10.1f}")
    if args.out:
        args.out.write_text(json.dumps({"dataset": str(args.dataset), "documents": len(answers),
                                        "top_k": linker.config.top_k, "figures": figures}, indent=2) + "\n",
                            encoding="utf-8")


if __name__ == "__main__":
    main()
