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
overlapping a gold mention with other offsets, or where the gold has no mention at all. Matching is GERBIL's
strong InKB matching (`gerbil.matching`) on the accepted titles' URIs, without its URI expansion, so the
totals can differ from `gerbil.run`'s by a few mentions.

    python -m bench.error_breakdown --kb ../shared/data/kb/entities.jsonl.gz --dataset ../shared/data/aida/dev.ttl \
        --title-variants ../shared/data/aida/dev_title_variants.tsv
"""
from __future__ import annotations

import argparse
import dataclasses
import json
from collections import Counter
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from annotator.data_types import Mention
from annotator.pipeline.document import Document, PassageScores
from annotator.pipeline.linker import Linker
from annotator.pipeline.stages import Reading
from annotator.training.data import (NIL_PREFIX, GoldSpan, TitleLookup, TrainingDocument, build_documents, load_kb,
                                     read_nif_corpus, read_title_variants, wordpiece_span)
from annotator.uris import dbpedia_uri
from gerbil.matching import Marking, match_predictions, strong_span_match, weak_span_match
from gerbil.scores import Counts

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


def classify_document(golds: Sequence[GoldSpan], reachable: Sequence[bool | None],
                      nil_spans: Collection[tuple[int, int]],
                      predictions: Sequence[Mention]) -> tuple[list[str], list[str]]:
    """The outcome of each gold mention and of each prediction of one document.

    Args:
        golds: the linked gold mentions with their accepted titles.
        reachable: per gold, whether its entity was among the candidates of a passage holding it (None: the
            entity is not in the KB).
        nil_spans: (start, end) of the document's NIL gold mentions.
        predictions: the linker's mentions.

    Returns:
        One of `GOLD_OUTCOMES` per gold and one of `PREDICTION_OUTCOMES` per prediction, in input order.
    """
    gold_markings = [Marking(g.start, g.end, frozenset(map(dbpedia_uri, g.titles)), in_kb=True) for g in golds]
    predicted = [Marking(p.start, p.end, frozenset({p.uri}), in_kb=True) for p in predictions]
    pairs = match_predictions(gold_markings, predicted, span_match=strong_span_match)
    gold_outcomes = []
    for gold, reach, pair in zip(gold_markings, reachable, pairs):
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
    nil_markings = [Marking(start, end) for start, end in nil_spans]
    prediction_outcomes = []
    for i, p in enumerate(predicted):
        if i in consumed:
            prediction_outcomes.append("correct")
        elif any(strong_span_match(g, p) for g in gold_markings):
            prediction_outcomes.append("gold span, wrong entity")
        elif any(strong_span_match(g, p) for g in nil_markings):
            prediction_outcomes.append("span of a NIL gold mention")
        elif any(weak_span_match(g, p) for g in gold_markings + nil_markings):
            prediction_outcomes.append("overlaps a gold mention, other offsets")
        else:
            prediction_outcomes.append("no gold mention there")
    return gold_outcomes, prediction_outcomes


def reachability(document: TrainingDocument, offsets: Sequence[tuple[int, int]],
                 candidates: Sequence[np.ndarray]) -> list[bool | None]:
    """Per gold of `document`: whether a passage holding it whole read its entity (None: the gold has no
    KB row or no wordpiece, so no passage holds it).

    Args:
        document: the document as `build_documents` cut it (the linker cuts the same passages).
        offsets: its wordpieces' character offsets.
        candidates: the KB rows each of its passages was read against.
    """
    reach: list[bool | None] = []
    for gold in document.gold_spans:
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
    parser.add_argument("--title-variants", help="TSV of other accepted titles (shared: aida/dev_title_variants.tsv)")
    parser.add_argument("--docs", type=int, help="only the first N documents")
    parser.add_argument("--k", type=int, help="candidates per passage (default: the checkpoint's)")
    parser.add_argument("--threshold", type=float, help="γ (default: the checkpoint's)")
    parser.add_argument("--out", help="write the counts and every error (document, span, surface, titles) as JSON")
    args = parser.parse_args()

    overrides = {name: value for name, value in (("top_k", args.k), ("threshold", args.threshold)) if value is not None}
    linker = Linker.from_pretrained(args.model, kb_path=args.kb, config_overrides=overrides)
    kb = load_kb(linker.kb_path)
    lookup = TitleLookup(kb)
    nif_documents = read_nif_corpus(args.dataset)[: args.docs]
    variants = read_title_variants(args.title_variants) if args.title_variants else None
    documents = build_documents(nif_documents, linker.builder, lookup, title_variants=variants)

    gold_counts: Counter[str] = Counter()
    prediction_counts: Counter[str] = Counter()
    errors = []
    for nif_document, document in zip(tqdm(nif_documents, desc="linking", unit="doc"), documents):
        recording = CandidateRecording(linker.reading)
        predictions = dataclasses.replace(linker, reading=recording).link(document.text)
        offsets = linker.builder.tokenize_document(document.text).offsets
        reach = reachability(document, offsets, recording.candidates)
        nil_spans = {(a.start, a.end) for a in nif_document.annotations if a.uris and a.uris[0].startswith(NIL_PREFIX)}
        gold_outcomes, prediction_outcomes = classify_document(document.gold_spans, reach, nil_spans, predictions)
        gold_counts.update(gold_outcomes)
        prediction_counts.update(prediction_outcomes)
        errors += [{"document": document.uri, "gold": [g.start, g.end], "surface": document.text[g.start:g.end],
                    "titles": sorted(g.titles), "outcome": outcome}
                   for g, outcome in zip(document.gold_spans, gold_outcomes) if outcome != "linked correctly"]
        errors += [{"document": document.uri, "predicted": [p.start, p.end], "surface": p.surface, "title": p.title,
                    "score": p.score, "outcome": outcome}
                   for p, outcome in zip(predictions, prediction_outcomes) if outcome != "correct"]

    tp = gold_counts["linked correctly"]
    scores = Counts(tp, sum(prediction_counts.values()) - tp, sum(gold_counts.values()) - tp).prf()
    print(lookup.report())
    print(f"{len(documents)} documents, K={linker.config.top_k}, γ={linker.config.threshold:g}, "
          f"{linker.describe()['entities']} entities; InKB P / R / F1 "
          f"{100 * scores.precision:.1f} / {100 * scores.recall:.1f} / {100 * scores.f1:.1f}")
    _table("linked gold mentions", gold_counts, GOLD_OUTCOMES)
    _table("predictions", prediction_counts, PREDICTION_OUTCOMES)
    if args.out:
        Path(args.out).write_text(json.dumps({"dataset": args.dataset, "top_k": linker.config.top_k,
                                              "threshold": linker.config.threshold, "golds": dict(gold_counts),
                                              "predictions": dict(prediction_counts), "errors": errors},
                                             indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
