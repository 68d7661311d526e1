"""Tests for passage windows and character offsets on tricky Unicode (annotator.tokenization)."""
from __future__ import annotations

import pytest
from transformers import PreTrainedTokenizerBase

from annotator.tokenization import InputBuilder

from tests.annotator.conftest import TINY_CONFIG

# Accents, a tab, an emoji ([UNK]), NBSP, a zero-width space and a combining accent (both dropped by the
# tokenizer), CRLF and full-width letters ([UNK]).
TRICKY = "Zürich\tcafé 😀 São\u00a0Paulo\u200b naïve\r\nEnd \u0301x Ｔｏｋｙｏ"
TRICKY_WORDS = ["Zürich", "café", "😀", "São", "Paulo", "naïve", "End", "x", "Ｔｏｋｙｏ"]


@pytest.fixture()
def builder(tokenizer: PreTrainedTokenizerBase) -> InputBuilder:
    return InputBuilder(tokenizer, TINY_CONFIG)


def test_offsets_point_at_the_original_characters(builder: InputBuilder) -> None:
    document = builder.tokenize_document(TRICKY)
    assert [TRICKY[s:e] for s, e in document.offsets] == TRICKY_WORDS


def test_passages_are_overlapping_windows_reaching_the_end(builder: InputBuilder) -> None:
    text = " ".join(f"word{i}" for i in range(20))  # "word12" → "word", "##12": 40 wordpieces
    document = builder.tokenize_document(text)
    passages = builder.split_passages(document)
    width = TINY_CONFIG.passage_len - 2
    assert [p.token_start for p in passages] == [0, 5, 10, 15, 20, 25, 30]
    assert all(len(p.ids) == width for p in passages)
    assert passages[-1].token_start + width == len(document.ids)
    for p in passages:
        assert p.ids == document.ids[p.token_start:p.token_start + width]
        assert p.offsets == document.offsets[p.token_start:p.token_start + width]


def test_short_document_is_one_passage_and_empty_has_none(builder: InputBuilder) -> None:
    document = builder.tokenize_document(TRICKY)
    assert len(document.ids) < TINY_CONFIG.passage_len
    [passage] = builder.split_passages(document)
    assert passage.ids == document.ids
    assert builder.split_passages(builder.tokenize_document(" \t\n")) == []


def test_topic_is_the_first_word_and_can_be_switched_off(tokenizer: PreTrainedTokenizerBase) -> None:
    with_topic = InputBuilder(tokenizer, TINY_CONFIG)
    document = with_topic.tokenize_document("SOCCER - Lyon beat Paris")
    assert tokenizer.decode(document.topic_ids) == "soccer"
    passage_input = with_topic.passage_input(with_topic.split_passages(document)[0], document.topic_ids)
    assert passage_input[-3:] == [with_topic.topic_marker_id, *document.topic_ids, tokenizer.sep_token_id]
    without = InputBuilder(tokenizer, TINY_CONFIG.replace(add_topic=False))
    assert without.tokenize_document("SOCCER - Lyon beat Paris").topic_ids == ()
