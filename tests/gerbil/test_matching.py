"""Strong/weak span matching, meaning matching, GERBIL's one-to-one counting and the D2KB filter."""
from __future__ import annotations

from gerbil.matching import (Marking, count_matches, drop_unmatched_spans, meaning_match, strong_span_match,
                             weak_span_match)
from gerbil.scores import Counts

A, B = frozenset({"http://dbpedia.org/resource/A"}), frozenset({"http://dbpedia.org/resource/B"})


def kb(start: int, end: int, uris: frozenset[str] = A) -> Marking:
    return Marking(start, end, uris, True)


def ee(start: int, end: int, uri: str = "http://aida/notInWiki/x") -> Marking:
    return Marking(start, end, frozenset({uri}), False)


def test_strong_span_needs_equal_start_and_end() -> None:
    assert strong_span_match(kb(0, 5), kb(0, 5))
    assert not strong_span_match(kb(0, 5), kb(0, 4))
    assert not strong_span_match(kb(0, 5), kb(1, 5))


def test_weak_span_needs_overlap_not_contact() -> None:
    assert weak_span_match(kb(0, 5), kb(3, 9))
    assert weak_span_match(kb(3, 9), kb(0, 5))
    assert weak_span_match(kb(0, 10), kb(2, 4))
    assert not weak_span_match(kb(0, 5), kb(5, 9))
    assert not weak_span_match(kb(5, 9), kb(0, 5))


def test_meaning_match_by_class() -> None:
    assert meaning_match(kb(0, 1, A | B), kb(0, 1, B))
    assert not meaning_match(kb(0, 1, A), kb(0, 1, B))
    assert meaning_match(ee(0, 1, "http://x/1"), ee(0, 1, "http://y/2"))  # any two emerging entities
    assert not meaning_match(kb(0, 1), ee(0, 1))
    assert not meaning_match(ee(0, 1), kb(0, 1))


def test_duplicates_cost_precision() -> None:
    counts = count_matches([kb(0, 5)], [kb(0, 5), kb(0, 5)], span_match=strong_span_match)
    assert counts == Counts(tp=1, fp=1, fn=0)


def test_each_gold_consumes_the_first_unused_match() -> None:
    # Weakly, both predictions match the first gold; it takes the first, so the second gold gets the other.
    gold = [kb(0, 10), kb(4, 8)]
    predicted = [kb(0, 5), kb(4, 8)]
    assert count_matches(gold, predicted, span_match=weak_span_match) == Counts(tp=2, fp=0, fn=0)
    # Taking the first match is greedy, not a maximum matching: (4,8) takes (2,6), which (0,3) needed.
    assert count_matches([kb(4, 8), kb(0, 3)], [kb(2, 6), kb(5, 7)], span_match=weak_span_match) == Counts(1, 1, 1)
    assert count_matches([kb(0, 10), kb(0, 3)], [kb(2, 6), kb(20, 25)], span_match=weak_span_match) == Counts(1, 1, 1)


def test_wrong_meaning_is_a_false_positive_and_a_false_negative() -> None:
    assert count_matches([kb(0, 5, A)], [kb(0, 5, B)], span_match=strong_span_match) == Counts(0, 1, 1)
    assert count_matches([kb(0, 5, A)], [kb(0, 5, B)], span_match=strong_span_match,
                         with_meaning=False) == Counts(1, 0, 0)


def test_d2kb_filter_drops_predictions_on_no_gold_span_but_keeps_duplicates() -> None:
    gold = [kb(0, 5), kb(10, 15)]
    predicted = [kb(0, 5), kb(0, 5, B), kb(1, 5), kb(20, 25)]
    assert drop_unmatched_spans(gold, predicted) == [kb(0, 5), kb(0, 5, B)]
