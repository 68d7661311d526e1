"""Passage spans → character spans of the document, merged across overlapping passages."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from annotator.pipeline.decoding import LabelledSpan
from annotator.model.tokenization import Passage


@dataclass(frozen=True)
class LinkedSpan:
    """Characters `start:end` of the document linked to KB row `entity` with `score`."""

    start: int
    end: int
    entity: int
    score: float
    by_title: bool = False  # a given span linked because its text is the entity's title, whatever its score

    def is_linked(self, threshold: float) -> bool:
        """Whether the span names its entity rather than NIL: the paper's bar, score above γ (`threshold`).
        Decoded spans always pass (decoding keeps only those); a given span (D2KB) whose best entity scores
        lower is NIL, unless its text titles an entry likely meant (`annotator.pipeline.title_answers`)."""
        return self.by_title or self.score > threshold


def to_character_spans(spans: Iterable[LabelledSpan], passages: Sequence[Passage],
                       candidate_rows: Sequence[Sequence[int]]) -> list[LinkedSpan]:
    """Map passage wordpiece spans to characters through each passage's offset mapping.

    Args:
        spans: decoded spans; `span.passage` indexes `passages` and `candidate_rows`.
        passages: the document's passages.
        candidate_rows: KB rows of each passage's candidates, in the order the reader saw them.
    """
    result = []
    for span in spans:
        offsets = passages[span.passage].offsets
        result.append(LinkedSpan(offsets[span.start][0], offsets[span.end][1],
                                 int(candidate_rows[span.passage][span.candidate]), span.score))
    return result


def _best_first(spans: Iterable[LinkedSpan]) -> list[LinkedSpan]:
    # Ties are broken by position and entity so that the result never depends on input order.
    return sorted(spans, key=lambda s: (-s.score, s.start, s.end, s.entity))


def best_entity_per_span(spans: Iterable[LinkedSpan]) -> list[LinkedSpan]:
    """One entity per (start, end): the highest-scoring one."""
    best: dict[tuple[int, int], LinkedSpan] = {}
    for span in _best_first(spans):
        best.setdefault((span.start, span.end), span)
    return list(best.values())


def outside(spans: Iterable[LinkedSpan], others: Sequence[LinkedSpan]) -> list[LinkedSpan]:
    """The spans that overlap none of `others`, in input order."""
    return [span for span in spans if all(span.end <= other.start or other.end <= span.start for other in others)]


def drop_overlaps(spans: Iterable[LinkedSpan]) -> list[LinkedSpan]:
    """Greedily keep the highest-scoring spans that overlap no span kept before."""
    kept: list[LinkedSpan] = []
    for span in _best_first(spans):
        if outside([span], kept):
            kept.append(span)
    return kept


def joined(links: Sequence[LinkedSpan], start: int, end: int, entity: int) -> list[LinkedSpan] | None:
    """`links` with those lying wholly inside characters `start:end` made one link to `entity` that takes their best
    score, sorted by position; None where none lies inside or one crosses the edges."""
    inside = [link for link in links if start <= link.start and link.end <= end]
    if not inside or any(link.start < end and start < link.end and link not in inside for link in links):
        return None
    kept = [link for link in links if link not in inside]
    return sorted([*kept, LinkedSpan(start, end, entity, max(link.score for link in inside))],
                  key=lambda s: (s.start, s.end))


def merge(spans: Iterable[LinkedSpan]) -> list[LinkedSpan]:
    """Merge a document's spans from all its passages, sorted by position: the best entity per span and no
    overlapping spans, because GERBIL matches one prediction per gold span (the paper merged exact duplicates
    only)."""
    merged = drop_overlaps(without_bridges(best_entity_per_span(spans)))
    return sorted(merged, key=lambda s: (s.start, s.end, -s.score, s.entity))


def without_bridges(spans: Sequence[LinkedSpan]) -> list[LinkedSpan]:
    """The spans less those that bridge two mentions of their own entity: a span that holds two disjoint spans of
    the same entity. p_span is a product of independent start and end probabilities, so with two mentions of an
    entity in a passage the first one's start and the second one's end make a span too, often the likeliest."""
    by_entity: dict[int, list[LinkedSpan]] = {}
    for span in spans:
        by_entity.setdefault(span.entity, []).append(span)
    return [span for span in spans if not _bridges(span, by_entity[span.entity])]


def _bridges(span: LinkedSpan, same_entity: Sequence[LinkedSpan]) -> bool:
    inside = [other for other in same_entity
              if other != span and span.start <= other.start and other.end <= span.end]
    # two of them are disjoint exactly when the one that ends first ends before the one that starts last begins
    return bool(inside) and min(other.end for other in inside) <= max(other.start for other in inside)
