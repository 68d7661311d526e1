"""GERBIL's span and meaning matchings as pure functions, and its one-to-one matching counter."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gerbil.scores import Counts


@dataclass(frozen=True)
class Marking:
    """An annotation ready for scoring: a half-open code-point span and its expanded, classified meaning.

    Attributes:
        start: first code point of the span.
        end: code point after the span.
        uris: the annotation's URIs after expansion (see `gerbil.uris.UriExpander`).
        in_kb: whether any of `uris` lies in a KB namespace (False: emerging entity).
        confidence: the annotator's `itsrdf:taConfidence`, if any.
    """

    start: int
    end: int
    uris: frozenset[str] = frozenset()
    in_kb: bool = False
    confidence: float | None = None


SpanMatch = Callable[[Marking, Marking], bool]


def strong_span_match(gold: Marking, predicted: Marking) -> bool:
    """Same start and same end (GERBIL `StrongSpanMatchingsSearcher`, "Ma")."""
    return gold.start == predicted.start and gold.end == predicted.end


def weak_span_match(gold: Marking, predicted: Marking) -> bool:
    """Overlapping spans (GERBIL `WeakSpanMatchingsSearcher`, "Mw"), with GERBIL's exact comparisons."""
    if predicted.start >= gold.start:
        return predicted.start < gold.end
    return gold.start < predicted.end


def meaning_match(gold: Marking, predicted: Marking) -> bool:
    """GERBIL's classified meaning matching.

    Two InKB markings match when their URI sets overlap; two emerging entities match whatever their URIs;
    an InKB marking never matches an emerging one.
    """
    if gold.in_kb and predicted.in_kb:
        return not gold.uris.isdisjoint(predicted.uris)
    return gold.in_kb == predicted.in_kb


SPAN_MATCHES: dict[str, SpanMatch] = {"strong": strong_span_match, "weak": weak_span_match}


def match_predictions(gold: Sequence[Marking], predicted: Sequence[Marking], *, span_match: SpanMatch,
                      with_meaning: bool = True) -> list[int | None]:
    """Pairs one document's markings as GERBIL's `MatchingsCounterImpl` does.

    Each gold marking, in order, consumes the first unused prediction that matches it, or none.

    Args:
        gold: the document's gold markings.
        predicted: the annotator's markings.
        span_match: the span predicate (`strong_span_match` or `weak_span_match`).
        with_meaning: also require `meaning_match` (False scores recognition only).

    Returns:
        Per gold marking, the index in `predicted` of the prediction it consumed, or None.
    """
    used = [False] * len(predicted)
    pairs: list[int | None] = []
    for g in gold:
        hit = next((i for i, p in enumerate(predicted)
                    if not used[i] and span_match(g, p) and (not with_meaning or meaning_match(g, p))), None)
        if hit is not None:
            used[hit] = True
        pairs.append(hit)
    return pairs


def count_matches(gold: Sequence[Marking], predicted: Sequence[Marking], *, span_match: SpanMatch,
                  with_meaning: bool = True) -> Counts:
    """Counts one document as GERBIL's `MatchingsCounterImpl` does (see `match_predictions`).

    A consumed prediction is a true positive and a gold left without one a false negative; every prediction
    left unused is a false positive, so duplicate or competing predictions for one gold span cost precision.

    Returns:
        The document's counts.
    """
    tp = sum(i is not None for i in match_predictions(gold, predicted, span_match=span_match,
                                                       with_meaning=with_meaning))
    return Counts(tp=tp, fp=len(predicted) - tp, fn=len(gold) - tp)


def drop_unmatched_spans(gold: Sequence[Marking], predicted: Sequence[Marking]) -> list[Marking]:
    """The D2KB filter: keeps only predictions whose span equals some gold span.

    GERBIL's `SearcherBasedNotMatchingMarkingFilter(StrongSpanMatchingsSearcher)` removes the others before
    scoring, so they are not false positives; duplicates on a gold span are kept and still cost precision.
    """
    spans = {(g.start, g.end) for g in gold}
    return [p for p in predicted if (p.start, p.end) in spans]
