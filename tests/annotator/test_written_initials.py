"""Tests for annotator.pipeline.written_initials: a name written with a middle initial names the candidate whose title
has that initial."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from transformers import PreTrainedTokenizerBase

from annotator.model.config import LinkerConfig
from annotator.model.tokenization import InputBuilder
from annotator.pipeline.document import Document, PassageScores
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.short_names import OtherBearers
from annotator.pipeline.written_initials import WrittenInitials, initials_links, has_middle_initial, name_words

TITLES = ["George H. W. Bush", "George W. Bush", "White House", "US Open (tennis)", "U.S. Open (golf)",
          "John F. Kennedy", "John Fitzgerald Kennedy", "John F. Kennedy", "George W. Bush (disambiguation)"]
DESCRIBED = np.array([True, True, True, True, True, True, True, False, False])


@pytest.fixture()
def builder(tokenizer: PreTrainedTokenizerBase) -> InputBuilder:
    return InputBuilder(tokenizer, LinkerConfig())


def document(text: str, builder: InputBuilder, rows: list[int], links: list[tuple[str, int]],
             rerank: list[float] | None = None) -> Document:
    """A one-passage document read against `rows` (rerank logits `rerank`), with `links` (surface, row)."""
    doc = Document.tokenized(text, None, builder)
    (passage,) = doc.passages
    width = 1 + len(passage.ids)
    logits = np.zeros((len(rows), width), dtype=np.float32)
    doc.scores = [PassageScores(np.array(rows), logits, logits, np.array(rerank or [0.0] * len(rows)))]
    doc.links = [LinkedSpan(text.index(s), text.index(s) + len(s), row, 0.3) for s, row in links]
    return doc


def linked(doc: Document) -> list[tuple[str, str, float]]:
    return [(doc.text[s.start:s.end], TITLES[s.entity], s.score) for s in initials_links(doc, TITLES, DESCRIBED)]


def test_name_words_split_joined_initials_and_ignore_case() -> None:
    assert name_words("G.W. Bush") == ("g.", "w.", "bush")
    assert name_words("George W. Bush") == ("george", "w.", "bush")
    assert name_words("GEORGE W. BUSH") == name_words("George W. Bush")


def test_a_name_needs_an_initial_between_two_words() -> None:
    assert has_middle_initial("George W. Bush")
    assert has_middle_initial("George H.W. Bush")
    assert has_middle_initial("John F. Kennedy Jr.")
    for text in ["J.K. Rowling", "J. Russell", "U.S. Open", "U.S.", "George Bush", "Washington, D.C.", "Bush W."]:
        assert not has_middle_initial(text), text


def test_the_written_initials_take_the_candidate_that_spells_them(builder: InputBuilder) -> None:
    text = "George W. Bush signed the bill at the White House on Monday."
    doc = document(text, builder, [0, 1, 2, 8], [("George W. Bush", 0), ("White House", 2)], [3.0, 2.0, 1.0, 4.0])
    # the span and its score stay; the title-only disambiguation page is not taken though ranked first
    assert linked(doc) == [("George W. Bush", "George W. Bush", 0.3), ("White House", "White House", 0.3)]


def test_a_link_whose_title_spells_the_text_stays(builder: InputBuilder) -> None:
    text = "George H. W. Bush met George W. Bush."
    doc = document(text, builder, [0, 1], [("George H. W. Bush", 0)])
    assert linked(doc) == [("George H. W. Bush", "George H. W. Bush", 0.3)]


def test_no_candidate_that_spells_the_text_leaves_the_link(builder: InputBuilder) -> None:
    text = "George W. Bush spoke."
    doc = document(text, builder, [0, 2], [("George W. Bush", 0)])
    assert linked(doc) == [("George W. Bush", "George H. W. Bush", 0.3)]


def test_leading_initials_are_left_to_the_reader(builder: InputBuilder) -> None:
    text = "He won the U.S. Open in June."
    doc = document(text, builder, [4, 3], [("U.S. Open", 3)])
    assert linked(doc) == [("U.S. Open", "US Open (tennis)", 0.3)]


def test_of_several_spellings_the_reader_best_ranked_described_one_is_taken(builder: InputBuilder) -> None:
    text = "Books about John F. Kennedy sold."
    doc = document(text, builder, [7, 6, 5, 0], [("John F. Kennedy", 6)], [3.0, 2.0, 1.0, 0.0])
    assert linked(doc) == [("John F. Kennedy", "John F. Kennedy", 0.3)]
    assert initials_links(doc, TITLES, DESCRIBED)[0].entity == 5  # not the title-only row 7, ranked first


def test_candidates_of_passages_that_do_not_hold_the_link_are_not_taken(builder: InputBuilder) -> None:
    text = " ".join(["word"] * 40) + " George W. Bush"
    doc = Document.tokenized(text, None, builder)
    assert len(doc.passages) == 2 and doc.passages[0].characters[1] < text.index("George")
    widths = [1 + len(p.ids) for p in doc.passages]
    doc.scores = [PassageScores(np.array(rows), np.zeros((len(rows), w)), np.zeros((len(rows), w)),
                                np.zeros(len(rows))) for rows, w in zip([[1], [0]], widths)]
    start = text.index("George")
    doc.links = [LinkedSpan(start, len(text), 0, 0.3)]
    assert initials_links(doc, TITLES, DESCRIBED) == doc.links


def test_found_and_given_links_alike(builder: InputBuilder) -> None:
    text = "George W. Bush spoke."
    doc = document(text, builder, [0, 1], [("George W. Bush", 0)])
    doc.given = [(0, 14)]
    WrittenInitials(TITLES, DESCRIBED).revise([doc], reading=None, decoding=None)  # type: ignore[arg-type]
    assert [TITLES[link.entity] for link in doc.links] == ["George W. Bush"]


def test_a_short_form_follows_the_full_name_to_the_initials_entity(builder: InputBuilder) -> None:
    # "Bush" took *George H. W. Bush* from the full name; the initials move the full name, then the later
    # other-bearers stage moves the short form after it (docs/decisions.md#other-bearers)
    text = "George W. Bush spoke. Bush smiled."
    doc = document(text, builder, [0, 1], [("George W. Bush", 0)])
    doc.links.append(LinkedSpan(text.rindex("Bush"), len(text) - len(" smiled."), 0, 0.3))
    for stage in (WrittenInitials(TITLES, DESCRIBED), OtherBearers(TITLES, DESCRIBED, frozenset())):
        stage.revise([doc], reading=None, decoding=SimpleNamespace(threshold=0.02))  # type: ignore[arg-type]
    assert [(text[link.start:link.end], TITLES[link.entity]) for link in doc.links] == [
        ("George W. Bush", "George W. Bush"), ("Bush", "George W. Bush")]


def test_it_ships_on_and_is_not_the_papers() -> None:
    assert LinkerConfig().written_initials and not LinkerConfig.paper().written_initials
