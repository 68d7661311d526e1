"""Reader scores → labelled spans of one passage (pure numpy, apart from the model)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
    if not len(rerank_logits):
        return []
    p_rerank = softmax(rerank_logits.astype(np.float64))  # (K,)
    # p_span ≤ 1, so a candidate with p_rerank ≤ γ keeps no span: at most 1/γ candidates are decoded.
    kept = np.flatnonzero(p_rerank > threshold)
    if not len(kept):
        return []
    p_start = softmax(start_logits[kept].astype(np.float64))  # (kept, T)
    p_end = softmax(end_logits[kept].astype(np.float64))
    positions = p_start.shape[1]
    # Only the allowed spans are scored and partially sorted: at K=100 a full sort of every (s, t) cell
    # was the largest CPU cost of a GPU request (docs/decisions.md#gpu-host-work).
    s, t = np.indices((positions, positions)).reshape(2, -1)
    allowed = (s >= 1) & (t >= s) & (t - s < max_span_len)
    if starts_word is not None:
        allowed &= np.array([False, *starts_word])[s]
    if ends_word is not None:
        allowed &= np.array([False, *ends_word])[t]
    starts, ends = s[allowed], t[allowed]
    if not len(starts):
        return []
    scores = p_start[:, starts] * p_end[:, ends]  # (K, A)
    top = min(top_spans, len(starts))
    best = np.argpartition(-scores, top - 1, axis=1)[:, :top]  # (K, P), unordered
    # Descending probability, ties to the earlier span: what a stable full sort gives.
    best = np.take_along_axis(best, np.lexsort((best, -np.take_along_axis(scores, best, axis=1)), axis=1), axis=1)
    no_mention = p_start[:, 0] * p_end[:, 0]
    results = []
    for i, k in enumerate(kept):
        for cell in best[i]:
            p_span = scores[i, cell]
            if p_span <= no_mention[i] or p_rerank[k] * p_span <= threshold:
                continue
            results.append(LabelledSpan(passage, int(k), int(starts[cell]) - 1, int(ends[cell]) - 1,
                                        float(p_rerank[k]), float(p_span)))
    return results


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
