"""Tests for annotator.pipeline.title_answers: a given span answered NIL takes the entry its text titles, where it
begins in lower case or that entry is described and its best candidate already."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from transformers import PreTrainedTokenizerBase

from annotator.model.config import LinkerConfig
from annotator.model.tokenization import InputBuilder
from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.linker import Linker
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.title_answers import TitleAnswers, title_answer_links
from annotator.pipeline.title_matches import TitleMatches
from tests.conftest import TINY_RUNTIME

TITLES = ["Car", "Car (film)", "Duran", "Judge", "JUDGE", "Social support", "Automobile", "IPhone",
          "Madison, Wisconsin", "Duran (comics)"]
DESCRIBED = np.array([True, True, False, False, True, True, True, True, True, True])
MATCHES = TitleMatches.from_titles(TITLES, DESCRIBED, 3)
GAMMA = 0.02


@pytest.fixture()
def builder(tokenizer: PreTrainedTokenizerBase) -> InputBuilder:
    return InputBuilder(tokenizer, LinkerConfig())


def given(text: str, builder: InputBuilder, answers: list[tuple[str, int, float]]) -> Document:
    """A document with given spans answered (surface, row, score) as decoding answers them."""
    spans = [(text.index(s), text.index(s) + len(s)) for s, _, _ in answers]
    doc = Document.tokenized(text, spans, builder)
    doc.links = [LinkedSpan(start, end, row, score) for (start, end), (_, row, score) in zip(spans, answers)]
    return doc


def answers(doc: Document) -> list[tuple[str, str | None]]:
    return [(doc.text[link.start:link.end], TITLES[link.entity] if link.is_linked(GAMMA) else None)
            for link in title_answer_links(doc, MATCHES, GAMMA)]


def test_a_lower_case_span_answered_nil_takes_the_entry_its_text_titles(builder: InputBuilder) -> None:
    doc = given("The car and the judge had social support and an iPhone.", builder,
                [("car", 1, 0.01), ("judge", 6, 0.001), ("social support", 6, 0.0), ("iPhone", 0, 0.01)])
    # "Car", not "Car (film)": the whole title; the described "JUDGE" before the title-only "Judge"
    assert answers(doc) == [("car", "Car"), ("judge", "JUDGE"), ("social support", "Social support"),
                            ("iPhone", "IPhone")]
    link = title_answer_links(doc, MATCHES, GAMMA)[0]
    assert link.by_title and link.score == 0.01  # linked whatever its score, which stays the reader's


def test_a_capitalised_span_answered_nil_takes_its_title_only_from_the_reader(builder: InputBuilder) -> None:
    text = "Duran won in Madison, Wisconsin. Car sales rose. Duran lost."
    doc = given(text, builder, [("Duran", 2, 0.01), ("Madison, Wisconsin", 8, 0.01), ("Car", 6, 0.01)])
    doc.links.append(LinkedSpan(text.rindex("Duran"), len(text) - 6, 9, 0.01))
    # the reader's best for "Madison, Wisconsin" is the described entry it titles; "Duran"'s is title-only, the
    # other "Duran"'s is not its title, and "Car"'s is another entry
    assert answers(doc) == [("Duran", None), ("Madison, Wisconsin", "Madison, Wisconsin"), ("Car", None),
                            ("Duran", None)]


def test_a_linked_span_keeps_its_entity_and_an_untitled_text_stays_nil(builder: InputBuilder) -> None:
    doc = given("The car was a vehicle.", builder, [("car", 6, 0.5), ("vehicle", 0, 0.01)])
    assert answers(doc) == [("car", "Automobile"), ("vehicle", None)]


def test_found_spans_are_left_alone(builder: InputBuilder) -> None:
    doc = given("The car.", builder, [("car", 1, 0.01)])
    doc.given = None
    TitleAnswers(MATCHES).revise([doc], reading=None,  # type: ignore[arg-type]
                                 decoding=DocumentDecoding(top_spans=3, max_span_len=10, threshold=GAMMA))
    assert not doc.links[0].is_linked(GAMMA)


def test_the_linker_answers_a_lower_case_span_it_would_leave_nil(tiny_checkpoint: Path, tiny_kb: Path) -> None:
    text = "We met at the café by the lake."
    span = (text.index("café"), text.index(" by"))
    answers = {}
    for on in (False, True):
        # γ 0.99: the tiny reader's answer is NIL
        linker = Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu", runtime=TINY_RUNTIME,
                                        config_overrides={"threshold": 0.99, "title_answers": on})
        (mention,) = linker.link(text, spans=[span])
        answers[on] = mention.title
    assert answers == {False: None, True: "Café"}


def test_it_ships_on_and_is_not_the_papers() -> None:
    assert LinkerConfig().title_answers and not LinkerConfig.paper().title_answers
