"""Tests for annotator.pipeline.full_titles: a mention grows to its entity's title where the text spells it out."""
from __future__ import annotations

from types import SimpleNamespace

from annotator.model.config import LinkerConfig
from annotator.pipeline.full_titles import FullTitles, comma_title_links, full_title_links
from annotator.pipeline.merging import LinkedSpan

TITLES = ["Madison, Wisconsin", "Wisconsin", "New York", "Bank of America", "America Merrill", "Warner Bros.",
          "Christ Church, Oxford"]


def _span(text: str, surface: str, entity: int, score: float = 0.5) -> LinkedSpan:
    start = text.index(surface)
    return LinkedSpan(start, start + len(surface), entity, score)


def _links(text: str, spans: list[LinkedSpan]) -> list[tuple[str, str, float]]:
    return [(text[s.start:s.end], TITLES[s.entity], s.score) for s in full_title_links(text, spans, TITLES)]


def test_a_span_takes_its_entitys_title_and_the_link_inside_goes() -> None:
    text = "She was born in Madison, Wisconsin, and studied at Christ Church, Oxford."
    spans = [_span(text, "Madison", 0, 0.7), _span(text, "Wisconsin", 1, 0.9), _span(text, "Christ Church", 6)]
    assert _links(text, spans) == [("Madison, Wisconsin", "Madison, Wisconsin", 0.7),
                                   ("Christ Church, Oxford", "Christ Church, Oxford", 0.5)]


def test_the_title_ending_in_punctuation_still_ends_a_word() -> None:
    text = "Warner Bros. said so."
    assert _links(text, [_span(text, "Warner", 5)]) == [("Warner Bros.", "Warner Bros.", 0.5)]


def test_a_text_that_differs_from_the_title_leaves_the_spans_as_they_are() -> None:
    # another spelling, another case, a title that would end inside a word, a title no longer than the span
    for text, surface, entity in [("Madison, Wis. voted.", "Madison", 0), ("MADISON, WISCONSIN voted.", "MADISON", 0),
                                  ("A New Yorker wrote.", "New", 2), ("New York voted.", "New York", 2)]:
        spans = [_span(text, surface, entity)]
        assert full_title_links(text, spans, TITLES) == spans


def test_a_link_that_crosses_the_titles_end_blocks_it() -> None:
    text = "Bank of America Merrill advised."
    spans = [_span(text, "Bank", 3), _span(text, "America Merrill", 4)]
    assert full_title_links(text, spans, TITLES) == spans


def test_given_spans_are_left_as_given() -> None:
    text = "Born in Madison, Wisconsin."
    given = [_span(text, "Madison", 0)]
    d2kb = SimpleNamespace(text=text, given=[(given[0].start, given[0].end)], links=list(given))
    a2kb = SimpleNamespace(text=text, given=None, links=list(given))
    FullTitles(TITLES).revise([d2kb, a2kb], reading=None, decoding=None)  # type: ignore[arg-type, list-item]
    assert d2kb.links == given
    assert [text[s.start:s.end] for s in a2kb.links] == ["Madison, Wisconsin"]


COMMA_TITLES = {"Parkersburg, Iowa": 0, "Long Beach, California": 1, "Washington, D.C.": 2, "Paris, Texas": 3}


def test_a_place_region_title_around_a_link_is_one_mention_of_that_entry() -> None:
    text = "Born in Parkersburg, Iowa, he moved to Long Beach, California, then to Washington, D.C. for good."
    links = [_span(text, "Iowa", 7, 0.3), _span(text, "Long Beach", 8, 0.5), _span(text, "California", 9, 0.6),
             _span(text, "Washington", 10, 0.4)]
    found = comma_title_links(text, links, COMMA_TITLES)
    assert [(text[s.start:s.end], s.entity, s.score) for s in found] == [
        ("Parkersburg, Iowa", 0, 0.3), ("Long Beach, California", 1, 0.6), ("Washington, D.C.", 2, 0.4)]


def test_no_link_inside_or_one_crossing_the_title_leaves_the_links_alone() -> None:
    text = "In Paris, Texas hold-outs met Paris, Texas Rangers fans."
    crossing = [_span(text, "Texas Rangers", 5)]
    assert comma_title_links(text, [], COMMA_TITLES) == []
    assert comma_title_links(text, crossing, COMMA_TITLES) == crossing
    # a title ending inside a word is no match either
    assert comma_title_links("Paris, Texasville", [LinkedSpan(0, 5, 5, 0.5)], COMMA_TITLES) == [LinkedSpan(0, 5, 5, 0.5)]


def test_the_post_processor_reads_its_titles_for_both_rules() -> None:
    stage = FullTitles(["Madison, Wisconsin", "Wisconsin", "Parkersburg, Iowa", "Iowa"])
    text = "From Madison, Wisconsin and Parkersburg, Iowa."
    document = SimpleNamespace(text=text, given=None,
                               links=[_span(text, "Madison", 0), _span(text, "Wisconsin", 1), _span(text, "Iowa", 3)])
    stage.revise([document], reading=None, decoding=None)  # type: ignore[arg-type, list-item]
    assert [(text[s.start:s.end], s.entity) for s in document.links] == [("Madison, Wisconsin", 0),
                                                                         ("Parkersburg, Iowa", 2)]


def test_it_ships_on_and_is_not_the_papers() -> None:
    assert LinkerConfig().full_titles and not LinkerConfig.paper().full_titles
