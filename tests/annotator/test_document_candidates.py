"""Tests for the second stage: annotator.pipeline.document_candidates and how the Linker reads and adds its mentions."""
from __future__ import annotations


from annotator.pipeline.document_candidates import document_candidates, title_words
from annotator.pipeline.merging import LinkedSpan
from annotator.model.tokenization import Passage
from annotator.pipeline.linker import Linker
from tests.support.scripted_linker import scripted_linker


def test_title_words_drop_the_qualifier_and_generic_words() -> None:
    assert title_words("Peter Such (cricketer)") == {"peter", "such"}
    assert title_words("England national football team") == {"england"}
    assert title_words("AT&T Classic") == {"at&t", "classic"}


def _passage(index: int, start: int, end: int) -> Passage:
    # Only the character range matters here: one "wordpiece" per passage is enough.
    return Passage(index, index, (0,), ((start, end),), (True,), (True,))


def test_candidates_are_linked_entities_sharing_a_capitalised_unlinked_word() -> None:
    text = "Donovan Bailey beat MaliVai Washington. Later Bailey met WASHINGTON and the national side of England."
    first, second = text.index(" Later"), len(text)
    titles = ["Donovan Bailey", "MaliVai Washington", "England national football team", "Bailey (surname)"]
    linked = [LinkedSpan(0, 14, 0, 0.9), LinkedSpan(20, 38, 1, 0.8)]
    passages = [_passage(0, 0, first), _passage(1, first + 1, second)]
    rows = document_candidates(text, passages, [[0, 1], [1]], linked, titles)
    # Passage 0 already read both entities; passage 1 retrieved Washington, and Bailey only the document
    # linked. England was never linked; the unlinked "Bailey (surname)" is no document candidate.
    assert [r.tolist() for r in rows] == [[], [0]]


def test_words_inside_linked_spans_or_in_lower_case_pull_in_nothing() -> None:
    text = "Donovan Bailey ran. Donovan Bailey won; bailey and the national team cheered."
    linked = [LinkedSpan(0, 14, 0, 0.9), LinkedSpan(20, 34, 0, 0.9), LinkedSpan(58, 66, 1, 0.5)]
    passages = [_passage(0, 20, len(text))]
    rows = document_candidates(text, passages, [[]], linked, ["Donovan Bailey", "National Team (band)"])
    assert [r.tolist() for r in rows] == [[]]


# The second "Lovelace" sits two passages (10 wordpieces, stride 5) away from the full name.
TEXT = "Ada Lovelace wrote notes, and then many more words were written here about other things; Lovelace died."


def test_second_stage_adds_the_short_reference_and_keeps_the_first_pass(tiny_linker: Linker) -> None:
    first_pass = scripted_linker(tiny_linker, threshold=0.05)
    before = [(m.surface, m.title) for m in first_pass.link(TEXT)]
    assert before == [("Ada Lovelace", "Ada Lovelace")]
    assert len(first_pass.reading.reads) == 1

    scripted = scripted_linker(tiny_linker, threshold=0.05, document_candidates=True)
    mentions = scripted.link(TEXT)
    assert [(m.surface, m.title) for m in mentions] == [("Ada Lovelace", "Ada Lovelace"), ("Lovelace", "Ada Lovelace")]
    assert mentions[1].start == TEXT.rindex("Lovelace")
    # The second read covers only the passages holding the unlinked "Lovelace", one new pair each.
    _, second_read = scripted.reading.reads
    assert set(second_read) == {0, 1}


def test_second_stage_disambiguates_given_spans_again(tiny_linker: Linker) -> None:
    second = (TEXT.rindex("Lovelace"), TEXT.rindex("Lovelace") + 8)
    chosen = {}
    for on in (False, True):
        scripted = scripted_linker(tiny_linker, threshold=0.05, document_candidates=on)
        chosen[on] = [(m.surface, m.title) for m in scripted.link(TEXT, [(0, 12), second])]
    # Alone, the second "Lovelace" retrieves only the distractor, too unlikely to link (NIL); the document's Ada
    # Lovelace wins it back.
    assert chosen[False] == [("Ada Lovelace", "Ada Lovelace"), ("Lovelace", None)]
    assert chosen[True] == [("Ada Lovelace", "Ada Lovelace"), ("Lovelace", "Ada Lovelace")]


def test_nil_answers_suggest_no_candidates(tiny_linker: Linker) -> None:
    # The reader marks all of "Ada Lovelace", so the given "Ada" alone scores near 0 and is NIL: its best
    # entity was not linked and must not become the later "Lovelace"'s candidate.
    scripted = scripted_linker(tiny_linker, threshold=0.05, document_candidates=True)
    mentions = scripted.link(TEXT, [(0, 3), (TEXT.rindex("Lovelace"), TEXT.rindex("Lovelace") + 8)])
    assert [(m.surface, m.title) for m in mentions] == [("Ada", None), ("Lovelace", None)]
    assert len(scripted.reading.reads) == 1
