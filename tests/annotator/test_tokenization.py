"""Tests for passage windows and character offsets on tricky Unicode (annotator.model.tokenization)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import PreTrainedTokenizerBase

from annotator.model.tokenization import InputBuilder, right_padded

from tests.conftest import TINY_CONFIG

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
    # A window may begin inside a word; it still knows that its first wordpiece does not start one.
    assert [text[s:e] for s, e in passages[1].offsets[:2]] == ["2", "word"]
    assert passages[1].starts_word[:2] == (False, True) and passages[1].ends_word[:2] == (True, False)


def test_word_boundaries_follow_the_tokenizers_words(builder: InputBuilder) -> None:
    text = "word12 U.S. Zürich"
    document = builder.tokenize_document(text)
    pieces = [text[s:e] for s, e in document.offsets]
    assert pieces == ["word", "12", "U", ".", "S", ".", "Zürich"]
    assert document.starts_word == (True, False, True, True, True, True, True)
    assert document.ends_word == (False, True, True, True, True, True, True)


def test_short_document_is_one_passage_and_empty_has_none(builder: InputBuilder) -> None:
    document = builder.tokenize_document(TRICKY)
    assert len(document.ids) < TINY_CONFIG.passage_len
    [passage] = builder.split_passages(document)
    assert passage.ids == document.ids
    assert builder.split_passages(builder.tokenize_document(" \t\n")) == []


def test_a_short_passage_is_filled_to_the_window_and_the_fill_is_masked(builder: InputBuilder) -> None:
    # Training only sees full windows: the topic and the entity keep their positions (docs/decisions.md#short-passage-fill).
    short = builder.tokenize_document("SOCCER - Lyon beat Paris")
    full = builder.tokenize_document(" ".join(f"word{i}" for i in range(20)))
    [passage] = builder.split_passages(short)
    short_input = builder.passage_input(passage, short.topic_ids)
    full_input = builder.passage_input(builder.split_passages(full)[0], full.topic_ids)
    width, n = TINY_CONFIG.passage_len - 2, len(passage.ids)
    assert n < width
    assert short_input[:1 + width] == [builder.cls_id, *passage.ids, *[builder.pad_id] * (width - n)]
    assert short_input.index(builder.topic_marker_id) == full_input.index(builder.topic_marker_id) == 1 + width
    attended = [1] * (1 + n) + [0] * (width - n) + [1] * (len(short_input) - 1 - width)
    assert builder.pad([short_input]).attention_mask.tolist() == [attended]
    entity = [builder.cls_id, 41, 42, builder.sep_id]
    batch = builder.reader_batch([short_input], np.array([0]), *right_padded([entity], builder.pad_id))
    assert batch.attention_mask.tolist() == [attended + [1] * 3]
    assert batch.input_ids[0, -3:].tolist() == [41, 42, builder.sep_id]
    assert torch.equal(batch.rows(np.array([0])).input_ids, batch.input_ids)  # the masked fill cuts nothing off


def test_topic_is_the_first_word_and_can_be_switched_off(tokenizer: PreTrainedTokenizerBase) -> None:
    with_topic = InputBuilder(tokenizer, TINY_CONFIG)
    document = with_topic.tokenize_document("SOCCER - Lyon beat Paris")
    assert tokenizer.decode(document.topic_ids) == "soccer"
    passage_input = with_topic.passage_input(with_topic.split_passages(document)[0], document.topic_ids)
    assert passage_input[-3:] == [with_topic.topic_marker_id, *document.topic_ids, tokenizer.sep_token_id]
    without = InputBuilder(tokenizer, TINY_CONFIG.replace(add_topic=False))
    assert without.tokenize_document("SOCCER - Lyon beat Paris").topic_ids == ()


def test_reader_batch_puts_each_entity_after_its_passage(builder: InputBuilder) -> None:
    cls, sep, pad = builder.cls_id, builder.sep_id, builder.pad_id
    passages = [[cls, 11, 12, sep], [cls, 21, sep]]
    entities = [[cls, 31, sep], [cls, 41, 42, 43, sep], [cls, 51, sep]]
    entity_ids, lengths = right_padded(entities, fill=-7)  # entity padding never reaches the batch
    batch = builder.reader_batch(passages, np.array([0, 0, 1]), entity_ids, lengths)
    assert batch.input_ids.tolist() == [[cls, 11, 12, sep, 31, sep, pad, pad],
                                        [cls, 11, 12, sep, 41, 42, 43, sep],
                                        [cls, 21, sep, 51, sep, pad, pad, pad]]
    assert batch.attention_mask.tolist() == [[1] * 6 + [0] * 2, [1] * 8, [1] * 5 + [0] * 3]
    assert batch.token_type_ids.tolist() == [[0] * 4 + [1] * 2 + [0] * 2, [0] * 4 + [1] * 4,
                                             [0] * 3 + [1] * 2 + [0] * 3]


def test_reader_batch_rows_are_concatenations_and_cut_to_their_longest(builder: InputBuilder) -> None:
    rng = np.random.default_rng(0)
    passages = [[builder.cls_id, *rng.integers(1000, 2000, rng.integers(0, 20)), builder.sep_id] for _ in range(5)]
    entities = [[builder.cls_id, *rng.integers(1000, 2000, rng.integers(1, 30)), builder.sep_id] for _ in range(40)]
    pair_passages = rng.integers(0, len(passages), len(entities))
    batch = builder.reader_batch(passages, pair_passages, *right_padded(entities, builder.pad_id))
    for i, (p, entity) in enumerate(zip(pair_passages, entities)):
        expected = [*passages[p], *entity[1:]]
        n = int(batch.attention_mask[i].sum())
        assert batch.input_ids[i, :n].tolist() == expected
        assert batch.token_type_ids[i, :n].tolist() == [0] * len(passages[p]) + [1] * (len(entity) - 1)
    chosen = np.array([3, 17, 5])
    part = batch.rows(chosen)
    longest = int(batch.attention_mask[chosen].sum(1).max())
    assert part.input_ids.shape == (3, longest)
    assert torch.equal(part.input_ids, batch.input_ids[chosen, :longest])
    assert torch.equal(part.token_type_ids, batch.token_type_ids[chosen, :longest])


def test_pad_right_pads_in_segment_zero(builder: InputBuilder) -> None:
    sequences = [[builder.cls_id, 5, 6, builder.sep_id], [builder.cls_id, builder.sep_id]]
    batch = builder.pad(sequences)
    assert batch.input_ids.tolist() == [sequences[0], [builder.cls_id, builder.sep_id, builder.pad_id, builder.pad_id]]
    assert batch.attention_mask.tolist() == [[1, 1, 1, 1], [1, 1, 0, 0]]
    assert batch.token_type_ids.tolist() == [[0] * 4, [0] * 4]
