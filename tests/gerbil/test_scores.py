"""Counts that add up, GERBIL's P/R/F1 edge cases, micro vs macro, and the best-threshold search."""
from __future__ import annotations

import pytest

from gerbil.matching import Marking, count_matches, strong_span_match
from gerbil.scores import Counts, Prf, macro, micro, score_documents

URI = frozenset({"http://dbpedia.org/resource/A"})
WRONG = frozenset({"http://dbpedia.org/resource/B"})


def count(gold: list[Marking], predicted: list[Marking]) -> Counts:
    return count_matches(gold, predicted, span_match=strong_span_match)


def test_counts_add_up() -> None:
    assert Counts(1, 2, 3) + Counts(10, 20, 30) == Counts(11, 22, 33)
    assert sum([Counts(1, 0, 0), Counts(0, 1, 0)], Counts()) == Counts(1, 1, 0)


def test_prf_edge_cases() -> None:
    assert Counts().prf() == Prf(1.0, 1.0, 1.0)  # an empty document with an empty answer is perfect
    assert Counts(0, 1, 0).prf() == Prf(0.0, 0.0, 0.0)
    assert Counts(0, 0, 1).prf() == Prf(0.0, 0.0, 0.0)
    assert Counts(1, 1, 0).prf() == Prf(0.5, 1.0, pytest.approx(2 / 3))


def test_micro_and_macro_on_three_documents_by_hand() -> None:
    # doc 1: 2 gold, 2 right; doc 2: 2 gold, 1 right, 1 wrong; doc 3: empty gold, empty answer.
    docs = [Counts(2, 0, 0), Counts(1, 1, 1), Counts(0, 0, 0)]
    assert micro(docs) == Prf(0.75, 0.75, 0.75)
    # macro: (1 + 0.5 + 1) / 3 for each measure.
    assert macro(docs) == Prf(pytest.approx(2.5 / 3), pytest.approx(2.5 / 3), pytest.approx(2.5 / 3))


def test_macro_of_empty_document_with_spurious_answer_is_zero() -> None:
    assert macro([Counts(0, 1, 0)]) == Prf(0.0, 0.0, 0.0)


def test_best_threshold_picks_best_micro_f1_and_macro_at_it() -> None:
    gold = [Marking(0, 1, URI, True), Marking(2, 3, URI, True)]
    predicted = [Marking(0, 1, URI, True, 0.9), Marking(2, 3, WRONG, True, 0.2), Marking(5, 6, URI, True, 0.5)]
    scores = score_documents([(gold, predicted)], count)
    assert scores.threshold == 0.9
    assert scores.counts == Counts(1, 0, 1)
    assert scores.micro.f1 == pytest.approx(2 / 3)
    assert scores.macro.f1 == pytest.approx(2 / 3)


def test_unscored_predictions_are_always_kept() -> None:
    gold = [Marking(0, 1, URI, True), Marking(2, 3, URI, True)]
    predicted = [Marking(0, 1, URI, True), Marking(2, 3, URI, True, 0.3), Marking(4, 5, URI, True, 0.6)]
    scores = score_documents([(gold, predicted)], count)
    assert scores.threshold == 0.3  # keeping all beats dropping the 0.3 one; the unscored one stays in both
    assert scores.counts == Counts(2, 1, 0)
    worse = score_documents([(gold[:1], predicted[:1] + predicted[2:])], count)
    assert worse.threshold == 0.6 and worse.counts == Counts(1, 1, 0)


def test_threshold_applies_across_documents() -> None:
    doc1 = ([Marking(0, 1, URI, True)], [Marking(0, 1, URI, True, 0.4)])
    doc2 = ([], [Marking(0, 1, URI, True, 0.1)])
    scores = score_documents([doc1, doc2], count)
    assert scores.threshold == 0.4
    assert scores.counts == Counts(1, 0, 0)
    assert scores.macro == Prf(1.0, 1.0, 1.0)


def test_without_confidences_no_threshold() -> None:
    scores = score_documents([([Marking(0, 1, URI, True)], [Marking(0, 1, URI, True)])], count)
    assert scores.threshold is None and scores.micro.f1 == 1.0
