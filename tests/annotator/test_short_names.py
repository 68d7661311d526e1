"""Tests for annotator.pipeline.short_names and how the Linker adds short names end to end and for given spans."""
from __future__ import annotations


from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.short_names import open_name_runs, short_name_links
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
    text = ("Mark Waugh and Steve Waugh batted; Waugh was out. J. Russell Smith ran; J. ran. Roberto Duran boxed; "
            "Duran won. I Won came out; I agree. Czech National Bank cut rates; National Bank said so.")
    titles = ["Mark Waugh", "Steve Waugh", "J. Russell Smith", "Roberto Durán", "I Won", "Czech National Bank"]
    linked = [_span(text, surface, row, 0.8) for row, surface in
              enumerate(["Mark Waugh", "Steve Waugh", "J. Russell Smith", "Roberto Duran", "I Won",
                         "Czech National Bank"])]
    # Waugh names two linked people; "J" and "I" are too short; "Duran" is not a word of the title "Roberto Durán";
    # "National" is a generic title word.
    assert short_name_links(text, open_name_runs(text, linked), linked, titles) == []


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
