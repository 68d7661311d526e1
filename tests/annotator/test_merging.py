"""Tests for annotator.pipeline.merging: offsets through the passage mapping and each merge rule."""
from __future__ import annotations

from annotator.pipeline.decoding import LabelledSpan
from annotator.pipeline.merging import (LinkedSpan, best_entity_per_span, drop_overlaps, merge, to_character_spans,
                                        without_bridges)
from annotator.model.tokenization import Passage


def test_passage_spans_map_through_the_offset_mapping() -> None:
    text = "Lake Zürich 😀 shore"
    whole = (True, True, True)
    passages = [Passage(0, 0, (1, 2, 3), ((0, 4), (5, 11), (12, 13)), whole, whole),
                Passage(1, 1, (2, 3, 4), ((5, 11), (12, 13), (14, 19)), whole, whole)]
    spans = [LabelledSpan(0, 1, 0, 1, 0.5, 0.8), LabelledSpan(1, 0, 1, 2, 1.0, 0.3)]
    linked = to_character_spans(spans, passages, [[10, 11], [12]])
    assert [(text[s.start:s.end], s.entity) for s in linked] == [("Lake Zürich", 11), ("😀 shore", 12)]
    assert linked[0].score == 0.4


def test_same_span_keeps_its_best_entity() -> None:
    spans = [LinkedSpan(0, 4, 1, 0.3), LinkedSpan(0, 4, 2, 0.5), LinkedSpan(5, 9, 1, 0.1)]
    assert sorted(best_entity_per_span(spans), key=lambda s: s.start) == [LinkedSpan(0, 4, 2, 0.5),
                                                                          LinkedSpan(5, 9, 1, 0.1)]


def test_overlaps_keep_the_best_greedily() -> None:
    # 0:10 beats 5:15, so 5:15 goes; 12:20 then overlaps nothing kept and stays; touching ends do not overlap.
    spans = [LinkedSpan(5, 15, 1, 0.4), LinkedSpan(0, 10, 2, 0.5), LinkedSpan(12, 20, 3, 0.3),
             LinkedSpan(20, 22, 4, 0.2)]
    assert sorted(drop_overlaps(spans), key=lambda s: s.start) == [
        LinkedSpan(0, 10, 2, 0.5), LinkedSpan(12, 20, 3, 0.3), LinkedSpan(20, 22, 4, 0.2)]


def test_merge_keeps_one_entity_per_span_and_no_overlaps_in_position_order() -> None:
    spans = [LinkedSpan(9, 12, 4, 0.1), LinkedSpan(0, 4, 1, 0.3), LinkedSpan(0, 4, 1, 0.2), LinkedSpan(0, 4, 2, 0.5),
             LinkedSpan(2, 8, 3, 0.4)]
    assert merge(spans) == [LinkedSpan(0, 4, 2, 0.5), LinkedSpan(9, 12, 4, 0.1)]


def test_a_span_that_bridges_two_mentions_of_its_entity_goes() -> None:
    # "NICE. NICE, France": the first mention's start and the second's end made the likeliest span.
    text = "NICE. NICE, France"
    bridge, first, second = LinkedSpan(0, 10, 7, 0.5), LinkedSpan(0, 4, 7, 0.3), LinkedSpan(6, 10, 7, 0.2)
    assert text[bridge.start:bridge.end] == "NICE. NICE"
    assert merge([bridge, first, second]) == [first, second]


def test_a_span_holding_other_entities_or_one_mention_stays() -> None:
    outer = LinkedSpan(0, 22, 1, 0.5)  # "Bosnia and Herzegovina"
    assert without_bridges([outer, LinkedSpan(0, 6, 2, 0.2), LinkedSpan(11, 22, 3, 0.2)]) == [
        outer, LinkedSpan(0, 6, 2, 0.2), LinkedSpan(11, 22, 3, 0.2)]
    assert without_bridges([outer, LinkedSpan(0, 6, 1, 0.2)]) == [outer, LinkedSpan(0, 6, 1, 0.2)]
    # two overlapping inner spans are one mention, not two
    assert without_bridges([outer, LinkedSpan(0, 10, 1, 0.2), LinkedSpan(7, 14, 1, 0.1)]) == [
        outer, LinkedSpan(0, 10, 1, 0.2), LinkedSpan(7, 14, 1, 0.1)]
