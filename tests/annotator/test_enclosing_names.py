"""Tests for annotator.pipeline.enclosing_names: a link inside a longer name that a described entry's title spells
becomes a link to that entry."""
from __future__ import annotations

import numpy as np

from annotator.pipeline.enclosing_names import enclosing_name_links
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.title_matches import TitleMatches

TITLES = ["Canada", "Air Canada", "London", "Transport for London", "Tower of London", "Inter Milan", "Milan",
          "Sky News", "Hong Kong", "Hong Kong people", "The Australian", "Australia", "Air France"]
DESCRIBED = np.array([True, True, True, True, True, True, True, False, True, True, True, True, True])
MATCHES = TitleMatches.from_titles(TITLES, DESCRIBED, 3)


def _span(text: str, surface: str, entity: int, score: float = 0.5) -> LinkedSpan:
    start = text.index(surface)
    return LinkedSpan(start, start + len(surface), entity, score)


def _links(text: str, spans: list[LinkedSpan]) -> list[tuple[str, str, float]]:
    return [(text[s.start:s.end], TITLES[s.entity], s.score) for s in enclosing_name_links(text, spans, MATCHES)]


def test_a_link_inside_a_described_name_becomes_a_link_to_it() -> None:
    text = "Air Canada flew from the Tower of London's gate to Inter Milan. Transport for London said so."
    spans = [_span(text, "Canada", 0, 0.4), _span(text, "London", 2, 0.6), _span(text, "Milan", 6),
             LinkedSpan(text.rindex("London"), text.rindex("London") + 6, 2, 0.3)]
    # words before, after and on both sides; a possessive ends the name; the name keeps the best score inside
    assert _links(text, spans) == [("Air Canada", "Air Canada", 0.4), ("Tower of London", "Tower of London", 0.6),
                                   ("Inter Milan", "Inter Milan", 0.5),
                                   ("Transport for London", "Transport for London", 0.3)]


def test_the_links_inside_the_name_go_and_a_crossing_link_blocks_it() -> None:
    text = "Air Canada and Canada Air France."
    inside = [_span(text, "Air", 11, 0.2), _span(text, "Canada", 0, 0.9)]
    assert _links(text, inside) == [("Air Canada", "Air Canada", 0.9)]
    start = text.index("Canada Air")
    crossing = [LinkedSpan(start, start + len("Canada Air"), 0, 0.5),
                LinkedSpan(text.index("France"), text.index("France") + 6, 0, 0.5)]
    assert enclosing_name_links(text, crossing, MATCHES) == crossing


def test_only_a_described_name_in_capitalised_words_of_the_same_case_counts() -> None:
    # title-only ("Sky News"), a lower-case word added ("Hong Kong people"), another case ("AIR CANADA"), a linking
    # word at the edge ("The Australian" from "the Australian"), and words that are not the whole title
    for text, surface, entity in [("Watch Sky News now.", "Sky", 0), ("Hong Kong people voted.", "Hong Kong", 8),
                                  ("AIR CANADA flew.", "CANADA", 0), ("Read the Australian daily.", "Australian", 11),
                                  ("Air Canadian flew.", "Air", 0), ("Air  Canada flew.", "Canada", 0)]:
        spans = [_span(text, surface, entity)]
        assert enclosing_name_links(text, spans, MATCHES) == spans, text
