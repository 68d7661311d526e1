"""Tests for annotator.pipeline.short_names and how the Linker adds short names end to end and for given spans."""
from __future__ import annotations

import re

import numpy as np

from annotator.pipeline.document import Document
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.short_names import (OtherBearers, ShortNames, acronym_links, open_acronyms, open_name_runs,
                                            other_bearer_links, short_name_links)
from annotator.pipeline.linker import Linker
from tests.support.scripted_linker import scripted_linker


def _span(text: str, surface: str, entity: int, score: float, *, last: bool = False) -> LinkedSpan:
    start = text.rindex(surface) if last else text.index(surface)
    return LinkedSpan(start, start + len(surface), entity, score)


def _surfaces(text: str, spans: list[tuple[int, int]]) -> list[str]:
    return [text[start:end] for start, end in spans]


def test_open_runs_are_capitalised_words_outside_linked_spans_joined_by_one_space() -> None:
    text = "Aung San Suu Kyi met the Dutch envoy. Suu Kyi said, Yangon and NLD  Leaders agreed."
    linked = [_span(text, "Aung San Suu Kyi", 0, 0.9)]
    assert _surfaces(text, open_name_runs(text, linked)) == ["Dutch", "Suu Kyi", "Yangon", "NLD", "Leaders"]


def test_a_first_or_last_part_of_one_linked_full_name_takes_its_entity_and_best_score() -> None:
    text = ("Randall Cunningham threw twice. Cunningham and Randall Cunningham won; Randall smiled. "
            "Aung San Suu Kyi spoke; Suu Kyi and San waved.")
    titles = ["Randall Cunningham", "Aung San Suu Kyi"]
    linked = [_span(text, "Randall Cunningham", 0, 0.6), _span(text, "Randall Cunningham", 0, 0.9, last=True),
              _span(text, "Aung San Suu Kyi", 1, 0.7)]
    found = short_name_links(text, open_name_runs(text, linked), linked, titles)
    # "San" is a middle word: neither a first name nor a surname.
    assert [(text[s.start:s.end], s.entity, s.score) for s in found] == [
        ("Cunningham", 0, 0.9), ("Randall", 0, 0.9), ("Suu Kyi", 1, 0.7)]


def test_ambiguous_short_initial_or_untitled_parts_link_nothing() -> None:
    text = ("Mark Waugh and Steve Waugh batted; Waugh was out. J. Russell Smith ran; J. ran. Magic Johnson played; "
            "Magic won. I Won came out; I agree. Czech National Bank cut rates; National Bank said so.")
    titles = ["Mark Waugh", "Steve Waugh", "J. Russell Smith", "Earvin Johnson", "I Won", "Czech National Bank"]
    linked = [_span(text, surface, row, 0.8) for row, surface in
              enumerate(["Mark Waugh", "Steve Waugh", "J. Russell Smith", "Magic Johnson", "I Won",
                         "Czech National Bank"])]
    # Waugh names two linked people; "J" and "I" are too short; "Magic" is not a word of the title "Earvin Johnson";
    # "National" is a generic title word.
    assert short_name_links(text, open_name_runs(text, linked), linked, titles) == []


def test_accents_are_folded_where_the_text_drops_them() -> None:
    text = "Marcelo Rios won in Rome. Rios served well."
    linked = [_span(text, "Marcelo Rios", 0, 0.7)]
    found = short_name_links(text, open_name_runs(text, linked), linked, ["Marcelo Ríos"])
    assert [(text[s.start:s.end], s.entity) for s in found] == [("Rios", 0)]


def test_a_short_name_linked_to_another_bearer_takes_the_entity_named_in_full() -> None:
    text = ("Nolan Henke shot 65. Henke had no bogey. Madeleine Albright flew; Albright spoke. Statistics Canada said "
            "Canada grew. Washington State voted; Washington agreed. Mark Waugh and Steve Waugh batted; Waugh was out.")
    titles = ["Nolan Henke", "Tom Henke", "Madeleine Albright", "Albright", "Statistics Canada", "Canada",
              "Washington (state)", "Washington, D.C.", "Mark Waugh", "Steve Waugh", "Dean Waugh"]
    described = np.array([True, True, True, False, True, True, True, True, True, True, True])
    linked = [_span(text, "Nolan Henke", 0, 0.6), _span(text, "Henke", 1, 0.3, last=True),
              _span(text, "Madeleine Albright", 2, 0.8), _span(text, "Albright", 3, 0.5, last=True),
              _span(text, "Statistics Canada", 4, 0.8), _span(text, "Canada", 5, 0.5, last=True),
              _span(text, "Washington State", 6, 0.7), _span(text, "Washington", 7, 0.4, last=True),
              _span(text, "Mark Waugh", 8, 0.9), _span(text, "Steve Waugh", 9, 0.9),
              _span(text, "Waugh", 10, 0.2, last=True)]
    # Henke is another Henke; Albright a title-only entry of the bare name. Canada and Washington are described
    # entities named by their own text (a part after a comma is not the name); Waugh names two people linked in full.
    found = other_bearer_links(text, linked, titles, described, frozenset())
    assert [(text[s.start:s.end], s.entity, s.score) for s in found] == [("Henke", 0, 0.6), ("Albright", 2, 0.8)]
    # described, the entry *Albright* is a sense of its own
    assert len(other_bearer_links(text, linked, titles, np.ones(len(titles), dtype=bool), frozenset())) == 1


def test_a_persons_surname_takes_the_person_whatever_it_was_linked_to() -> None:
    text = ("Director Neil Jordan spoke. Jordan said the film, shot in Jordan, is done; Jordan smiled. Statistics "
            "Canada said Canada grew.")
    titles = ["Neil Jordan", "Jordan", "Statistics Canada", "Canada"]
    linked = [_span(text, "Neil Jordan", 0, 0.5), _span(text, "Statistics Canada", 2, 0.8),
              _span(text, "Canada", 3, 0.5, last=True)]
    linked += [LinkedSpan(m.start(), m.end(), 1, 0.3) for m in re.finditer(r"(?<!Neil )Jordan", text)]
    described = np.ones(len(titles), dtype=bool)
    # "Neil" is a given name: the country named by the surname moves, unless read as a place ("in Jordan")
    found = other_bearer_links(text, linked, titles, described, frozenset({"Neil"}))
    assert [(text[s.start:s.end], s.start, s.entity) for s in found] == [
        ("Jordan", text.index("Jordan said"), 0), ("Jordan", text.index("Jordan smiled"), 0)]
    # without the given name the described country keeps its links, as "Canada" beside "Statistics Canada" does
    assert other_bearer_links(text, linked, titles, described, frozenset()) == []


def test_the_stage_moves_other_bearers_end_to_end_and_for_given_spans(tiny_linker: Linker) -> None:
    text = "Nolan Henke shot 65. Later Henke had no bogey and Nolan smiled."
    titles = ["Nolan Henke", "Tom Henke"]
    full, short = (0, 11), (text.index("Henke", 12), text.index("Henke", 12) + 5)
    nolan = (text.rindex("Nolan"), text.rindex("Nolan") + 5)
    found = {}
    for given in (None, [full, short, nolan]):
        document = Document.tokenized(text, given, tiny_linker.builder)
        document.links = [LinkedSpan(*full, 0, 0.6), LinkedSpan(*short, 1, 0.3)]
        if given is not None:
            document.links.append(LinkedSpan(*nolan, 1, 0.0))  # answered NIL
        for stage in (ShortNames(titles), OtherBearers(titles, np.ones(2, dtype=bool), frozenset())):
            stage.revise([document], reading=tiny_linker.reading, decoding=tiny_linker.decoding)
        found[given is None] = sorted((text[s.start:s.end], s.entity) for s in document.links)
    assert found[True] == found[False] == [("Henke", 0), ("Nolan", 0), ("Nolan Henke", 0)]


def test_open_acronyms_are_three_capitals_or_dotted_letters_outside_links() -> None:
    text = "The NLD, the U.S. and NFL. AS IN A.B Nato OECD-led U.N."
    linked = [_span(text, "OECD", 0, 0.9)]
    # two capitals without dots are words of a capitalised headline; "A.B" lacks its last dot
    assert _surfaces(text, open_acronyms(text, linked)) == ["NLD", "U.S.", "NFL", "U.N."]


def test_an_acronym_takes_the_one_entity_written_out_with_its_initials() -> None:
    text = ("The National League for Democracy (NLD) met; NLD members and the UNITED NATIONS (U.N.) agreed. "
            "Agence France-Presse (AFP) said. Khmer Nation Party (KNP) and the IMF, BBC, CIA spoke.")
    titles = ["National League for Democracy", "United Nations", "Agence France-Presse",
              "Khmer National Party of Cambodia", "British Broadcasting Company", "BBC Radio"]
    linked = [_span(text, "National League for Democracy", 0, 0.7), _span(text, "UNITED NATIONS", 1, 0.9),
              _span(text, "Agence France-Presse", 2, 0.8), _span(text, "Khmer Nation Party", 3, 0.6)]
    found = acronym_links(text, open_acronyms(text, linked), linked, titles)
    # KNP: the entity's title is abbreviated otherwise; IMF, BBC, CIA: nothing written out
    assert [(text[s.start:s.end], s.entity, s.score) for s in found] == [
        ("NLD", 0, 0.7), ("NLD", 0, 0.7), ("U.N.", 1, 0.9), ("AFP", 2, 0.8)]


def test_an_acronym_of_two_entities_links_nothing() -> None:
    text = "Budapest Stock Exchange and Bombay Stock Exchange: BSE shares fell."
    titles = ["Budapest Stock Exchange", "Bombay Stock Exchange"]
    linked = [_span(text, "Budapest Stock Exchange", 0, 0.8), _span(text, "Bombay Stock Exchange", 1, 0.8)]
    assert acronym_links(text, open_acronyms(text, linked), linked, titles) == []


def test_the_stage_links_acronyms_end_to_end_and_for_given_spans(tiny_linker: Linker) -> None:
    text = "The Federal Open Market Committee met. The FOMC held rates."
    full, short = (4, 33), (text.index("FOMC"), text.index("FOMC") + 4)
    found = {}
    for given in (None, [full, short]):
        document = Document.tokenized(text, given, tiny_linker.builder)
        document.links = [LinkedSpan(*full, 0, 0.6)] + ([LinkedSpan(*short, 0, 0.0)] if given else [])
        stage = ShortNames(["Federal Open Market Committee"])
        stage.revise([document], reading=tiny_linker.reading, decoding=tiny_linker.decoding)
        found[given is None] = sorted((text[s.start:s.end], s.entity, s.score) for s in document.links)
    assert found[True] == found[False] == [("FOMC", 0, 0.6), ("Federal Open Market Committee", 0, 0.6)]


def test_a_one_word_mention_has_no_parts() -> None:
    text = "Washington beat Miami. Later Washington won again."
    linked = [_span(text, "Washington", 0, 0.9)]
    assert short_name_links(text, open_name_runs(text, linked), linked, ["Washington Redskins"]) == []


# The second "Lovelace" sits two passages (10 wordpieces, stride 5) away from the full name, and the scripted
# retrieval gives it only "Paris": without the document's own links it is unlinked.
TEXT = "Ada Lovelace wrote notes, and then many more words were written here about other things; Lovelace died."


def test_the_linker_adds_the_short_name_end_to_end(tiny_linker: Linker) -> None:
    found = {}
    for on in (False, True):
        scripted = scripted_linker(tiny_linker, threshold=0.05, short_names=on)
        found[on] = [(m.surface, m.title, m.start) for m in scripted.link(TEXT)]
        # Nothing is read again: the names come from the document's text and links.
        assert len(scripted.reading.reads) == 1
    assert found[False] == [("Ada Lovelace", "Ada Lovelace", 0)]
    assert found[True] == [("Ada Lovelace", "Ada Lovelace", 0), ("Lovelace", "Ada Lovelace", TEXT.rindex("Lovelace"))]


def test_the_linker_names_a_given_span_answered_nil(tiny_linker: Linker) -> None:
    second = (TEXT.rindex("Lovelace"), TEXT.rindex("Lovelace") + 8)
    chosen = {}
    for on in (False, True):
        scripted = scripted_linker(tiny_linker, threshold=0.05, short_names=on)
        chosen[on] = [(m.surface, m.title) for m in scripted.link(TEXT, [(0, 12), second])]
    assert chosen[False] == [("Ada Lovelace", "Ada Lovelace"), ("Lovelace", None)]
    assert chosen[True] == [("Ada Lovelace", "Ada Lovelace"), ("Lovelace", "Ada Lovelace")]
