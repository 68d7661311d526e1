"""Tests for annotator.pipeline.decoding on hand-set logits whose answer is known."""
from __future__ import annotations

import numpy as np
import pytest

from annotator.pipeline.decoding import (PassageLogits, decode_passage, decode_passages, given_span_scores, softmax,
                                         span_probabilities)

HIGH = 10.0


def peaked(positions: int, peak: int, *, rows: int = 1) -> np.ndarray:
    """(rows, positions) logits of 0 with HIGH at `peak`."""
    logits = np.zeros((rows, positions))
    logits[:, peak] = HIGH
    return logits


def test_span_probability_is_the_product_of_start_and_end() -> None:
    start, end = np.array([[0.0, 1.0, 2.0]]), np.array([[2.0, 0.0, 1.0]])
    spans = span_probabilities(start, end)
    assert spans[0, 1, 2] == pytest.approx(softmax(start)[0, 1] * softmax(end)[0, 2])
    assert spans.sum() == pytest.approx(1.0)


def test_clear_span_is_found_in_passage_wordpiece_indices() -> None:
    # Positions: 0 = [CLS], 1..6 = passage wordpieces 0..5; the mention is wordpieces 2..3.
    [span] = decode_passage(peaked(7, 3), peaked(7, 4), np.zeros(1), top_spans=1, max_span_len=10, threshold=0.05)
    assert (span.candidate, span.start, span.end) == (0, 2, 3)
    assert span.p_rerank == pytest.approx(1.0)
    assert span.p_span == pytest.approx(span_probabilities(peaked(7, 3), peaked(7, 4))[0, 3, 4])


def test_cls_span_rejects_every_span_even_without_threshold() -> None:
    assert decode_passage(peaked(7, 0), peaked(7, 0), np.zeros(1), top_spans=3, max_span_len=10, threshold=0.0) == []


def test_only_spans_that_beat_cls_are_kept() -> None:
    # [CLS] and one span share the start mass; only spans more probable than [CLS] survive.
    start = np.array([[HIGH, HIGH, 0, 0, 0]])
    end = np.array([[HIGH, 0, HIGH + 1, 0, 0]])
    spans = decode_passage(start, end, np.zeros(1), top_spans=3, max_span_len=10, threshold=0.0)
    assert [(s.start, s.end) for s in spans] == [(0, 1)]


def test_top_spans_limits_spans_per_candidate() -> None:
    start, end = np.zeros((2, 6)), np.zeros((2, 6))
    start[:, 0] = end[:, 0] = -HIGH  # [CLS] improbable: every span beats it
    for top in (1, 3):
        spans = decode_passage(start, end, np.zeros(2), top_spans=top, max_span_len=10, threshold=0.0)
        assert [s.candidate for s in spans] == [0] * top + [1] * top


def test_spans_longer_than_max_span_len_are_never_returned() -> None:
    start, end = peaked(9, 1), peaked(9, 7)  # best span: 7 wordpieces
    start[0, 0] = end[0, 0] = -HIGH
    spans = decode_passage(start, end, np.zeros(1), top_spans=3, max_span_len=3, threshold=0.0)
    assert spans and all(s.end - s.start < 3 for s in spans)
    long = decode_passage(start, end, np.zeros(1), top_spans=1, max_span_len=7, threshold=0.0)
    assert [(s.start, s.end) for s in long] == [(0, 6)]


def test_threshold_filters_on_rerank_times_span_probability() -> None:
    # Same clear span for two candidates; p_rerank = 0.8 and 0.2.
    start, end = peaked(5, 2, rows=2), peaked(5, 2, rows=2)
    rerank = np.log(np.array([0.8, 0.2]))
    p_span = span_probabilities(start, end)[0, 2, 2]
    kept = decode_passage(start, end, rerank, top_spans=1, max_span_len=10, threshold=0.5)
    assert [(s.candidate, round(s.score, 6)) for s in kept] == [(0, round(0.8 * p_span, 6))]
    both = decode_passage(start, end, rerank, top_spans=1, max_span_len=10, threshold=0.1)
    assert [s.candidate for s in both] == [0, 1]
    at_score = decode_passage(start, end, rerank, top_spans=1, max_span_len=10, threshold=both[1].score)
    assert [s.candidate for s in at_score] == [0]  # strictly greater than γ


def test_spans_start_and_end_on_whole_words_when_words_are_given() -> None:
    # Wordpieces "merlene", "otte", "##y", "won": the best span, "merlene otte", ends inside a word.
    start, end = peaked(5, 1), np.array([[0.0, 0.0, HIGH, HIGH - 1, 0.0]])
    start[0, 0] = end[0, 0] = -HIGH
    anywhere = decode_passage(start, end, np.zeros(1), top_spans=1, max_span_len=10, threshold=0.0)
    assert [(s.start, s.end) for s in anywhere] == [(0, 1)]
    whole = decode_passage(start, end, np.zeros(1), top_spans=1, max_span_len=10, threshold=0.0,
                           starts_word=(True, True, False, True), ends_word=(True, False, True, True))
    assert [(s.start, s.end) for s in whole] == [(0, 2)]


def test_passage_without_candidates_decodes_to_nothing() -> None:
    assert decode_passage(np.zeros((0, 5)), np.zeros((0, 5)), np.zeros(0), top_spans=3, max_span_len=10,
                          threshold=0.0) == []


def test_given_span_scores() -> None:
    start, end, rerank = peaked(6, 2, rows=2), peaked(6, 3, rows=2), np.array([0.0, 1.0])
    scores = given_span_scores(start, end, rerank, 1, 2)
    expected = softmax(rerank) * span_probabilities(start, end)[:, 2, 3]
    np.testing.assert_allclose(scores, expected)
    assert int(np.argmax(scores)) == 1


def reference_decode(start: np.ndarray, end: np.ndarray, rerank: np.ndarray, *, top_spans: int, max_span_len: int,
                     threshold: float, starts_word: np.ndarray, ends_word: np.ndarray) -> list[tuple[int, int, int]]:
    """Section 2.3 the obvious way: every candidate, every allowed span sorted, the top P tested."""
    spans, p_rerank = span_probabilities(start, end), softmax(rerank)
    found = []
    for k in range(len(rerank)):
        allowed = [(s, t) for s in range(1, start.shape[1]) for t in range(s, min(s + max_span_len, start.shape[1]))
                   if starts_word[s - 1] and ends_word[t - 1]]
        ranked = sorted(allowed, key=lambda st: -spans[k][st])[:top_spans]  # stable: ties keep the earlier span
        found += [(k, s - 1, t - 1) for s, t in ranked
                  if spans[k][s, t] > spans[k, 0, 0] and p_rerank[k] * spans[k][s, t] > threshold]
    return found


@pytest.mark.parametrize("seed", range(20))
def test_decoding_equals_the_obvious_search(seed: int) -> None:
    rng = np.random.default_rng(seed)
    candidates, positions = rng.integers(1, 60), rng.integers(2, 34)
    start, end = (rng.normal(0, 3, (candidates, positions)) for _ in range(2))
    rerank = rng.normal(0, 3, candidates)
    anywhere = np.ones(positions - 1, dtype=bool)
    starts_word, ends_word = (rng.random(positions - 1) < 0.7 for _ in range(2))
    for threshold in (0.0, 0.02, 0.05):
        spans = decode_passage(start, end, rerank, top_spans=3, max_span_len=10, threshold=threshold)
        assert [(s.candidate, s.start, s.end) for s in spans] == reference_decode(
            start, end, rerank, top_spans=3, max_span_len=10, threshold=threshold, starts_word=anywhere,
            ends_word=anywhere)
        whole = decode_passage(start, end, rerank, top_spans=3, max_span_len=10, threshold=threshold,
                               starts_word=starts_word, ends_word=ends_word)
        assert [(s.candidate, s.start, s.end) for s in whole] == reference_decode(
            start, end, rerank, top_spans=3, max_span_len=10, threshold=threshold, starts_word=starts_word,
            ends_word=ends_word)


@pytest.mark.parametrize("seed", range(10))
def test_passages_decoded_together_equal_each_alone(seed: int) -> None:
    rng = np.random.default_rng(seed)
    passages, expected = [], []
    for i in range(rng.integers(1, 8)):  # several widths, and passages with no candidates
        candidates, positions = rng.integers(0, 30), rng.choice([5, 17, 33])
        start, end = (rng.normal(0, 3, (candidates, positions)) for _ in range(2))
        rerank = rng.normal(0, 3, candidates)
        starts_word, ends_word = (rng.random(positions - 1) < 0.7 for _ in range(2))
        passages.append(PassageLogits(start, end, rerank, starts_word, ends_word))
        expected += [(i, *found) for found in reference_decode(
            start, end, rerank, top_spans=3, max_span_len=10, threshold=0.02, starts_word=starts_word,
            ends_word=ends_word)] if candidates else []
    spans = decode_passages(passages, top_spans=3, max_span_len=10, threshold=0.02)
    assert [(s.passage, s.candidate, s.start, s.end) for s in spans] == expected


def test_passage_of_no_wordpieces_decodes_to_nothing() -> None:
    assert decode_passage(np.zeros((2, 1)), np.zeros((2, 1)), np.zeros(2), top_spans=3, max_span_len=10,
                          threshold=0.0) == []
