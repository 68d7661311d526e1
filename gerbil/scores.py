"""Counts that add up, GERBIL's micro/macro precision, recall and F1, and the best-confidence-threshold search."""
from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar


@dataclass(frozen=True)
class Counts:
    """True positives, false positives and false negatives of one document or of a sum of documents."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    def prf(self) -> Prf:
        """Precision, recall and F1 as GERBIL's `FMeasureCalculator.calculateMeasures` computes them.

        Nothing to find and nothing found is perfect (1, 1, 1); no true positive but some error is (0, 0, 0).
        """
        if self.tp == 0:
            perfect = float(self.fp == 0 and self.fn == 0)
            return Prf(perfect, perfect, perfect)
        precision = self.tp / (self.tp + self.fp)
        recall = self.tp / (self.tp + self.fn)
        return Prf(precision, recall, 2 * precision * recall / (precision + recall))


@dataclass(frozen=True)
class Prf:
    """Precision, recall and F1, each in [0, 1]."""

    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class Scores:
    """Micro and macro scores over a dataset.

    Attributes:
        counts: the summed counts behind `micro`.
        micro: P/R/F1 of the summed counts.
        macro: mean over documents of the per-document P/R/F1.
        threshold: the confidence threshold these scores were taken at (None when no prediction had one).
    """

    counts: Counts
    micro: Prf
    macro: Prf
    threshold: float | None = None


def micro(per_document: Sequence[Counts]) -> Prf:
    """P/R/F1 of the counts summed over documents."""
    return sum(per_document, Counts()).prf()


def macro(per_document: Sequence[Counts]) -> Prf:
    """The mean over documents of per-document P/R/F1 (0 for a dataset without documents)."""
    if not per_document:
        return Prf(0.0, 0.0, 0.0)
    measures = [counts.prf() for counts in per_document]
    n = len(measures)
    return Prf(sum(m.precision for m in measures) / n, sum(m.recall for m in measures) / n,
               sum(m.f1 for m in measures) / n)


def summarize(per_document: Sequence[Counts], *, threshold: float | None = None) -> Scores:
    """Micro and macro scores from per-document counts."""
    return Scores(sum(per_document, Counts()), micro(per_document), macro(per_document), threshold)


class Scored(Protocol):
    """Anything with an optional confidence (a `gerbil.matching.Marking`)."""

    @property
    def confidence(self) -> float | None: ...


M = TypeVar("M", bound=Scored)


def _kept(predictions: Sequence[M], threshold: float | None) -> list[M]:
    # GERBIL treats a prediction without a score as scored Double.MAX_VALUE: it is always kept.
    if threshold is None:
        return [p for p in predictions if p.confidence is None]
    return [p for p in predictions if p.confidence is None or p.confidence >= threshold]


def score_documents(documents: Sequence[tuple[Sequence[M], Sequence[M]]],
                    count: Callable[[Sequence[M], Sequence[M]], Counts]) -> Scores:
    """Scores (gold, predictions) pairs; with confidences, at the threshold of best micro F1.

    As in GERBIL's `ConfidenceBasedFMeasureCalculator`, every distinct prediction confidence is tried as a
    threshold (predictions with confidence >= threshold are kept), the best micro F1 wins (ties go to the
    lowest threshold) and macro scores are taken at that same threshold.

    Args:
        documents: per document, its gold markings and the annotator's markings.
        count: the matching counter applied to one document (see `gerbil.matching.count_matches`).

    Returns:
        The scores, with `threshold` set when any prediction carried a confidence.
    """
    thresholds = sorted({p.confidence for _, preds in documents for p in preds if p.confidence is not None})
    if not thresholds:
        return summarize([count(gold, preds) for gold, preds in documents])
    # Per document, counts only change at its own confidences: compute them there and look up the rest.
    tables: list[tuple[list[float], list[Counts], Counts]] = []
    for gold, preds in documents:
        own = sorted({p.confidence for p in preds if p.confidence is not None})
        tables.append((own, [count(gold, _kept(preds, t)) for t in own], count(gold, _kept(preds, None))))

    def at(threshold: float) -> list[Counts]:
        per_document = []
        for own, counts, unscored_only in tables:
            i = bisect.bisect_left(own, threshold)
            per_document.append(counts[i] if i < len(own) else unscored_only)
        return per_document

    best = max(thresholds, key=lambda t: (micro(at(t)).f1, -t))
    return summarize(at(best), threshold=best)
