"""Bench: where the linker's InKB errors come from, mention by mention, on a NIF corpus with gold annotations.

The linker runs on each document as GERBIL would call it, while the candidates each passage is read against
are recorded. Every linked gold mention then gets one outcome, first that applies:

- linked correctly: a prediction has its exact span and one of its accepted titles;
- gold entity not in the KB: its title is not found (as in training's lookup), so no linker can get it
  (also the rare gold that covers no wordpiece);
- gold not among the candidates: no passage that holds the mention whole read its entity (retrieved in the top
  K, or a second-stage document candidate);
- right span, wrong entity: the reader found the span but preferred another candidate;
- span boundary differs: a prediction overlaps it with other offsets (strong matching counts it wrong);
- span not found: nothing overlaps it (every candidate's span scored ≤ γ or lost to [CLS]).

Predictions that link no gold are split the same way: on a gold span with another entity, on a NIL gold span,
overlapping a gold mention with other offsets, or where the gold has no mention at all. Answers and matching are
GERBIL's A2KB InKB strong matching with its URI expansion (`gerbil.experiment.document_markings`), so the totals are
those `python -m gerbil.run --in-process MODEL --kb KB` prints for the same dataset (with the same `--redirects`).

    python -m bench.error_breakdown --kb ../shared/data/kb/entities.jsonl.gz --dataset ../shared/data/aida/dev.ttl
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from annotator.pipeline.document import Document, PassageScores
from annotator.pipeline.linker import Linker
from annotator.pipeline.stages import Reading
from annotator.training.data import TitleLookup, TrainingDocument, build_documents, load_kb, wordpiece_span
from annotator.cli.corpora import corpus_documents, read_dataset
from gerbil.client import Answer, Task
from gerbil.datasets import load_redirects
from gerbil.experiment import document_markings, evaluate
from gerbil.matching import Marking, match_predictions, strong_span_match, weak_span_match
from nif import annotations_from_mentions

REPOSITORY = Path(__file__).resolve().parents[1]

GOLD_OUTCOMES = ("linked correctly", "gold entity not in the KB", "gold not among the candidates",
                 "right span, wrong entity", "span boundary differs", "span not found")
PREDICTION_OUTCOMES = ("correct", "gold span, wrong entity", "span of a NIL gold mention",
                       "overlaps a gold mention, other offsets", "no gold mention there")


class CandidateRecording:
    """A reading stage that passes its calls on to `reading` and keeps the KB rows each passage was read against:
    those retrieved, then any second-stage document candidates (one recording per linked document)."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading
        self.candidates: list[np.ndarray] = []  # per passage of the documents read, in order

    def scores(self, documents: Sequence[Document],
               candidates: Sequence[Sequence[np.ndarray]]) -> list[list[PassageScores]]:
        read = [rows for document_rows in candidates for rows in document_rows]
        self.candidates = [np.concatenate(rows) for rows in zip(self.candidates, read)] if self.candidates else read
        return self.reading.scores(documents, candidates)

    def describe(self) -> dict[str, str | int | float]:
        return self.reading.describe()


def classify_document(golds: Sequence[Marking], reachable: Sequence[bool | None], emerging: Sequence[Marking],
                      predicted: Sequence[Marking]) -> tuple[list[str], list[str]]:
    """The outcome of each InKB gold mention and of each InKB prediction of one document.

    Args:
        golds: the InKB gold markings, as GERBIL matches them.
        reachable: per gold, whether its entity was among the candidates of a passage holding it (None: the
            entity is not in the KB).
        emerging: the document's gold markings outside the KB (NIL mentions).
        predicted: the InKB markings of the linker's answer.

    Returns:
        One of `GOLD_OUTCOMES` per gold and one of `PREDICTION_OUTCOMES` per prediction, in input order.
    """
    pairs = match_predictions(golds, predicted, span_match=strong_span_match)
    gold_outcomes = []
    for gold, reach, pair in zip(golds, reachable, pairs):
        if pair is not None:
            gold_outcomes.append("linked correctly")
        elif reach is None:
            gold_outcomes.append("gold entity not in the KB")
        elif not reach:
            gold_outcomes.append("gold not among the candidates")
        elif any(strong_span_match(gold, p) for p in predicted):
            gold_outcomes.append("right span, wrong entity")
        elif any(weak_span_match(gold, p) for p in predicted):
            gold_outcomes.append("span boundary differs")
        else:
            gold_outcomes.append("span not found")
    consumed = set(pairs)
    prediction_outcomes = []
    for i, p in enumerate(predicted):
        if i in consumed:
            prediction_outcomes.append("correct")
        elif any(strong_span_match(g, p) for g in golds):
            prediction_outcomes.append("gold span, wrong entity")
        elif any(strong_span_match(g, p) for g in emerging):
            prediction_outcomes.append("span of a NIL gold mention")
        elif any(weak_span_match(g, p) for g in [*golds, *emerging]):
            prediction_outcomes.append("overlaps a gold mention, other offsets")
        else:
            prediction_outcomes.append("no gold mention there")
    return gold_outcomes, prediction_outcomes


def reachability(document: TrainingDocument, offsets: Sequence[tuple[int, int]],
                 candidates: Sequence[np.ndarray]) -> list[bool | None]:
    """Per gold link of `document`: whether a passage holding it whole read its entity (None: the gold has no
    KB row or no wordpiece, so no passage holds it).

    Args:
        document: the document as `build_documents` cut it (the linker cuts the same passages).
        offsets: its wordpieces' character offsets.
        candidates: the KB rows each of its passages was read against.
    """
    reach: list[bool | None] = []
    for gold in document.gold_links:
        pieces = wordpiece_span(offsets, gold.start, gold.end)
        found = [g.row in rows for passage, rows in zip(document.passages, candidates) for g in passage.golds
                 if (g.start + passage.passage.token_start, g.end + passage.passage.token_start) == pieces]
        reach.append(any(found) if found else None)
    return reach


def _table(title: str, counts: Counter[str], names: Sequence[str]) -> None:
    total = sum(counts.values())
    print(f"{title} ({total:,})")
    for name in names:
        print(f"  {name:<40}{counts[name]:>7,}{100 * counts[name] / max(total, 1):>8.1f} %")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPOSITORY / "models" / "entqa-minilm"), help="checkpoint folder")
    parser.add_argument("--kb", help="KB file (default: the checkpoint's demo KB)")
    parser.add_argument("--dataset", required=True, help="NIF corpus with gold annotations")
    parser.add_argument("--redirects", type=Path, help="TSV of source<TAB>target URIs or titles (as gerbil.run's)")
    parser.add_argument("--docs", type=int, help="only the first N documents")
    parser.add_argument("--k", type=int, help="candidates per passage (default: the checkpoint's)")
    parser.add_argument("--threshold", type=float, help="γ (default: the checkpoint's)")
    parser.add_argument("--out", help="write the counts and every error (document, span, surface, URIs) as JSON")
    args = parser.parse_args()

    overrides = {name: value for name, value in (("top_k", args.k), ("threshold", args.threshold)) if value is not None}
    linker = Linker.from_pretrained(args.model, kb_path=args.kb, config_overrides=overrides)
    kb = load_kb(linker.kb_path)
    lookup = TitleLookup(kb)
    dataset = read_dataset(Path(args.dataset), documents=args.docs)
    if args.redirects:
        dataset = dataclasses.replace(dataset, redirects=load_redirects(args.redirects))
    documents = build_documents(corpus_documents(dataset.documents), linker.builder, lookup)

    answers, reach_by_span = [], []
    for document in tqdm(documents, desc="linking", unit="doc"):
        # as gerbil.run's in-process annotator answers: one annotation per span, no confidence
        recording = CandidateRecording(linker.reading)
        annotations = annotations_from_mentions(dataclasses.replace(linker, reading=recording).link(document.text))
        answers.append(Answer(tuple(dataclasses.replace(a, confidence=None) for a in annotations), 0.0))
        offsets = linker.builder.tokenize_document(document.text).offsets
        reach = reachability(document, offsets, recording.candidates)
        reach_by_span.append({(g.start, g.end): r for g, r in zip(document.gold_links, reach)})

    gold_counts: Counter[str] = Counter()
    prediction_counts: Counter[str] = Counter()
    errors = []
    markings = document_markings(dataset, answers, task=Task.A2KB)
    for nif_document, answer, (gold, predicted), reach in zip(dataset.documents, answers, markings, reach_by_span):
        golds = [g for g in gold if g.in_kb]
        predicted = [p for p in predicted if p.in_kb]
        gold_outcomes, prediction_outcomes = classify_document(
            golds, [reach.get((g.start, g.end)) for g in golds], [g for g in gold if not g.in_kb], predicted)
        gold_counts.update(gold_outcomes)
        prediction_counts.update(prediction_outcomes)
        text = nif_document.text
        uris = {(a.start, a.end): list(a.uris) for a in nif_document.annotations}
        answered = {(a.start, a.end): list(a.uris) for a in answer.annotations}
        errors += [{"document": nif_document.uri, "gold": [g.start, g.end], "surface": text[g.start:g.end],
                    "uris": uris[g.start, g.end], "outcome": outcome}
                   for g, outcome in zip(golds, gold_outcomes) if outcome != "linked correctly"]
        errors += [{"document": nif_document.uri, "predicted": [p.start, p.end], "surface": text[p.start:p.end],
                    "uris": answered[p.start, p.end], "outcome": outcome}
                   for p, outcome in zip(predicted, prediction_outcomes) if outcome != "correct"]

    scores = evaluate(dataset, answers, task=Task.A2KB)["inkb"]
    print(lookup.report())
    print(f"{len(documents)} documents, K={linker.config.top_k}, γ={linker.config.threshold:g}, "
          f"{linker.describe()['entities']} entities; InKB tp {scores.counts.tp} fp {scores.counts.fp} "
          f"fn {scores.counts.fn}, micro P / R / F1 {100 * scores.micro.precision:.1f} / "
          f"{100 * scores.micro.recall:.1f} / {100 * scores.micro.f1:.1f}")
    _table("linked gold mentions", gold_counts, GOLD_OUTCOMES)
    _table("predictions", prediction_counts, PREDICTION_OUTCOMES)
    if args.out:
        Path(args.out).write_text(json.dumps({"dataset": args.dataset, "top_k": linker.config.top_k,
                                              "threshold": linker.config.threshold, "golds": dict(gold_counts),
                                              "predictions": dict(prediction_counts), "errors": errors},
                                             indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
