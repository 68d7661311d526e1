"""Tests for annotator.pipeline.national_teams: in a report on one kind of national team, a country's name is its
team."""
from __future__ import annotations

import re
from types import SimpleNamespace

from annotator.pipeline.document import Document
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.national_teams import NationalTeams
from annotator.pipeline.linker import Linker

TITLES = ["Turkey", "Turkey national football team", "Belgium", "Belgium national football team", "France",
          "France national football team", "Scotland national cricket team", "Scotland",
          "Romania national under-21 football team", "Romania", "Marc Degryse"]


def _span(text: str, surface: str, row: int, *, last: bool = False) -> LinkedSpan:
    start = text.rindex(surface) if last else text.index(surface)
    return LinkedSpan(start, start + len(surface), row, 0.4)


def _moved(text: str, linked: list[LinkedSpan]) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], TITLES[s.entity]) for s in NationalTeams.from_titles(TITLES).team_links(text, linked)]


def test_a_country_written_as_its_title_takes_the_one_kind_of_team_linked() -> None:
    text = "BRUSSELS 1996-08-31 Belgium beat Turkey 2-1. BELGIUM's Marc Degryse scored as belgium won."
    linked = [_span(text, "Belgium", 2), _span(text, "Turkey", 1), _span(text, "BELGIUM", 2),
              _span(text, "Marc Degryse", 10), _span(text, "belgium", 2)]
    # the entity's own title in any case; a person has no team
    assert _moved(text, linked) == [("Belgium", "Belgium national football team"),
                                    ("BELGIUM", "Belgium national football team"),
                                    ("belgium", "Belgium national football team")]


def test_a_name_read_as_a_place_stays_the_country() -> None:
    text = "TOFTIR, France 1996-08-31 Turkey beat France. The finals in France start soon; In France, fans cheered."
    linked = [LinkedSpan(m.start(), m.end(), 4, 0.4) for m in re.finditer("France", text)]
    # the dateline and "in" read it as a place; "beat France" is the team
    assert _moved(text, linked + [_span(text, "Turkey", 1)]) == [("France", "France national football team")]
    assert NationalTeams.from_titles(TITLES).team_links(text, linked + [_span(text, "Turkey", 1)])[0].start == \
        linked[1].start


def test_no_team_or_two_kinds_of_team_move_nothing() -> None:
    text = "Scotland and Romania met Turkey. Scotland won."
    no_team = [_span(text, "Scotland", 7), _span(text, "Romania", 9)]
    two_kinds = no_team + [_span(text, "Turkey", 1), _span(text, "Scotland", 6, last=True)]
    assert _moved(text, no_team) == [] and _moved(text, two_kinds) == []
    under_21 = [_span(text, "Romania", 8), _span(text, "Scotland", 7)]
    # Scotland has no under-21 football team in the KB
    assert _moved(text, under_21) == []


def test_the_stage_relinks_found_and_given_spans(tiny_linker: Linker) -> None:
    text = "Belgium beat Turkey."
    found = {}
    for given in (None, [(0, 7), (13, 19)]):
        document = Document.tokenized(text, given, tiny_linker.builder)
        document.links = [LinkedSpan(0, 7, 2, 0.3), LinkedSpan(13, 19, 1, 0.5)]
        NationalTeams.from_titles(TITLES).revise([document], reading=tiny_linker.reading,
                                                 decoding=SimpleNamespace(threshold=0.02))  # type: ignore[arg-type]
        found[given is None] = [(text[s.start:s.end], TITLES[s.entity]) for s in document.links]
    assert found[True] == found[False] == [("Belgium", "Belgium national football team"),
                                           ("Turkey", "Turkey national football team")]


def test_a_report_naming_a_competition_moves_countries_to_their_teams_in_it() -> None:
    titles = ["Spain", "Japan", "Fed Cup", "Spain Fed Cup team", "Japan Fed Cup team", "Davis Cup",
              "Spain Davis Cup team", "Turkey", "Turkey national football team"]
    teams = NationalTeams.from_titles(titles)
    text = "TENNIS - DRAW FOR 1997 FED CUP. Spain travels to Japan; the finals in Spain."
    linked = [LinkedSpan(m.start(), m.end(), titles.index(m.group()), 0.4) for m in re.finditer("Spain|Japan", text)]
    moved = [(s.start, titles[s.entity]) for s in teams.team_links(text, linked)]
    # the text names the competition; "in Spain" is a place
    assert moved == [(text.index("Spain"), "Spain Fed Cup team"), (text.index("Japan"), "Japan Fed Cup team")]
    # a report naming two competitions, or a competition and linked football teams, is on no one kind
    assert teams.team_links(text + " Davis Cup next.", linked) == []
    assert teams.team_links(text + " Turkey", linked + [LinkedSpan(len(text) + 1, len(text) + 7, 8, 0.4)]) == []
    assert teams.team_links("Spain travels to Japan.", [LinkedSpan(0, 5, 0, 0.4)]) == []
