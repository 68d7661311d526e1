"""Reader scores → labelled spans of one passage (pure numpy, apart from the model)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class LabelledSpan:
    """A mention of candidate `candidate` at passage wordpieces `start..end` (inclusive, 0-based)."""

    passage: int  # index of the passage in its document
    candidate: int  # index among the passage's K candidates
    start: int
    end: int
    p_rerank: float
    p_span: float

    @property
    def score(self) -> float:
        return self.p_rerank * self.p_span


def softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along `axis`."""
    shifted = np.exp(logits - logits.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


def span_probabilities(start_logits: np.ndarray, end_logits: np.ndarray) -> np.ndarray:
    """p_span(s, t) = p_start(s) × p_end(t), each softmaxed over [CLS] + passage positions.

    Args:
        start_logits: (K, 1 + n): position 0 is [CLS], position j + 1 is passage wordpiece j.
        end_logits: (K, 1 + n).

    Returns:
        (K, 1 + n, 1 + n) span probabilities; [:, 0, 0] is the [CLS] ("no mention") span.
    """
    p_start = softmax(start_logits.astype(np.float64))
    p_end = softmax(end_logits.astype(np.float64))
    return p_start[:, :, None] * p_end[:, None, :]


def decode_passage(start_logits: np.ndarray, end_logits: np.ndarray, rerank_logits: np.ndarray, *,
                   top_spans: int, max_span_len: int, threshold: float, passage: int = 0,
                   starts_word: Sequence[bool] | None = None, ends_word: Sequence[bool] | None = None
                   ) -> list[LabelledSpan]:
    """EntQA's decoding of one passage against its K candidates (paper, section 2.3).

    For each candidate: the `top_spans` most probable spans of at most `max_span_len` wordpieces that
    are more probable than the [CLS] span; then keep those with p_rerank × p_span > `threshold`, where
    p_rerank is softmaxed over the K candidates. Given word boundaries, a span starts and ends on whole words.

    Args:
        start_logits: (K, 1 + n) start scores over [CLS] + the n passage wordpieces.
        end_logits: (K, 1 + n) end scores.
        rerank_logits: (K,) rerank scores of the candidates.
        top_spans: P, spans per candidate.
        max_span_len: longest span in wordpieces.
        threshold: γ.
        passage: copied into the results.
        starts_word: (n,) whether each passage wordpiece begins a word; None: spans start anywhere.
        ends_word: (n,) whether each ends one; None: spans end anywhere.

    Returns:
        The surviving labelled spans, by candidate, then by descending p_span.
    """
    return [replace(span, passage=passage) for span in decode_passages(
        [PassageLogits(start_logits, end_logits, rerank_logits, starts_word, ends_word)],
        top_spans=top_spans, max_span_len=max_span_len, threshold=threshold)]


@dataclass(frozen=True)
class PassageLogits:
    """One passage's reader logits against its K candidates, and its word boundaries (see `decode_passage`)."""

    start: np.ndarray  # (K, 1 + n)
    end: np.ndarray  # (K, 1 + n)
    rerank: np.ndarray  # (K,)
    starts_word: Sequence[bool] | None = None  # (n,); None: spans start anywhere
    ends_word: Sequence[bool] | None = None


def decode_passages(passages: Sequence[PassageLogits], *, top_spans: int, max_span_len: int,
                    threshold: float) -> list[LabelledSpan]:
    """`decode_passage` of every passage, the same spans in passage order, the candidates of all passages of one
    length scored in one set of array operations: a passage at a time, numpy's per-call overhead cost a GPU request
    at K=100 about 10 ms per document (docs/decisions.md#gpu-host-work)."""
    p_rerank = [softmax(p.rerank.astype(np.float64)) if len(p.rerank) else np.zeros(0) for p in passages]
    # p_span ≤ 1, so a candidate with p_rerank ≤ γ keeps no span: at most 1/γ candidates per passage are decoded.
    kept = [np.flatnonzero(p > threshold) for p in p_rerank]
    by_width: dict[int, list[int]] = {}  # width → the passages of that width with a kept candidate
    for i, p in enumerate(passages):
        if len(kept[i]) and p.start.shape[1] > 1:  # a passage is more than [CLS]
            by_width.setdefault(p.start.shape[1], []).append(i)
    found = [_decode_width(by_width[width], passages, p_rerank, kept, top_spans=top_spans, max_span_len=max_span_len,
                           threshold=threshold) for width in sorted(by_width)]
    passage, candidate, rank, start, end, rerank, span = (np.concatenate(column) for column in zip(*found)) \
        if found else [np.zeros(0)] * 7
    order = np.lexsort((rank, candidate, passage))  # by passage, by candidate, then by descending p_span
    return [LabelledSpan(int(passage[i]), int(candidate[i]), int(start[i]), int(end[i]), float(rerank[i]),
                         float(span[i])) for i in order]


def _decode_width(members: list[int], passages: Sequence[PassageLogits], p_rerank: Sequence[np.ndarray],
                  kept: Sequence[np.ndarray], *, top_spans: int, max_span_len: int,
                  threshold: float) -> tuple[np.ndarray, ...]:
    """The surviving spans of `passages[members]`, all of one width, as arrays: passage, candidate, rank among the
    candidate's spans, start, end (passage wordpieces), p_rerank, p_span."""
    width = passages[members[0]].start.shape[1]
    row_passage = np.concatenate([np.full(len(kept[i]), i) for i in members])  # one row per kept candidate
    row_candidate = np.concatenate([kept[i] for i in members])
    row_rerank = np.concatenate([p_rerank[i][kept[i]] for i in members])
    p_start = softmax(np.concatenate([passages[i].start[kept[i]] for i in members]).astype(np.float64))
    p_end = softmax(np.concatenate([passages[i].end[kept[i]] for i in members]).astype(np.float64))
    # Only the cells a span may take are scored and partially sorted: at K=100 a full sort of every (s, t) cell
    # was the largest CPU cost of a GPU request (docs/decisions.md#gpu-host-work).
    s, t = np.indices((width, width)).reshape(2, -1)
    band = (s >= 1) & (t >= s) & (t - s < max_span_len)
    starts, ends = s[band], t[band]
    on_words = np.repeat(np.stack([_on_words(starts, ends, passages[i]) for i in members]),
                         [len(kept[i]) for i in members], axis=0)  # each passage's cells, once per kept candidate
    scores = np.where(on_words, p_start[:, starts] * p_end[:, ends], -np.inf)  # (rows, cells)
    top = min(top_spans, scores.shape[1])
    best = np.argpartition(-scores, top - 1, axis=1)[:, :top]  # (rows, P), unordered
    # Descending probability, ties to the earlier span: what a stable full sort gives.
    best = np.take_along_axis(best, np.lexsort((best, -np.take_along_axis(scores, best, axis=1)), axis=1), axis=1)
    p_span = np.take_along_axis(scores, best, axis=1)
    no_mention = p_start[:, 0] * p_end[:, 0]
    rows, rank = np.nonzero((p_span > no_mention[:, None]) & (row_rerank[:, None] * p_span > threshold))
    cells = best[rows, rank]
    return (row_passage[rows], row_candidate[rows], rank, starts[cells] - 1, ends[cells] - 1, row_rerank[rows],
            p_span[rows, rank])


def _on_words(starts: np.ndarray, ends: np.ndarray, logits: PassageLogits) -> np.ndarray:
    """Whether each (start, end) cell over [CLS] + the passage starts and ends on the passage's word boundaries."""
    on = np.ones(len(starts), dtype=bool)
    if logits.starts_word is not None:
        on &= np.array([False, *logits.starts_word])[starts]
    if logits.ends_word is not None:
        on &= np.array([False, *logits.ends_word])[ends]
    return on


def given_span_scores(start_logits: np.ndarray, end_logits: np.ndarray, rerank_logits: np.ndarray,
                      start: int, end: int) -> np.ndarray:
    """p_rerank × p_span of a given span (passage wordpieces `start..end`, inclusive) for each candidate.

    This is the D2KB score: the candidate that maximises it is the reader's entity for that span.

    Args:
        start_logits: (K, 1 + n).
        end_logits: (K, 1 + n).
        rerank_logits: (K,).
        start: first passage wordpiece of the span (0-based).
        end: last passage wordpiece of the span.

    Returns:
        (K,) scores.
    """
    p_start = softmax(start_logits.astype(np.float64))[:, start + 1]
    p_end = softmax(end_logits.astype(np.float64))[:, end + 1]
    return softmax(rerank_logits.astype(np.float64)) * p_start * p_end
