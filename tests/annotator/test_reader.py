"""The reader's inference copy that computes its last layer only where the linker reads it."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch
from transformers import MPNetConfig

from annotator.model.checkpoint import load_reader
from annotator.model.encoders import encoder_from_config
from annotator.pipeline.linker import Linker
from annotator.model.reader import Reader, span_positions_only
from annotator.model.retriever import DualEncoder

from tests.annotator.test_pipeline import TEXT
from tests.annotator.test_tokenization import TRICKY
from tests.support.tiny_reader import POSITIONS, random_pairs, tiny_reader


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
@pytest.mark.parametrize("lengths", [[12, 7, 3, 12], [4, 2], [9]])
def test_the_leading_positions_score_as_in_the_full_reader(attention: str, lengths: list[int]) -> None:
    full = tiny_reader(attention)
    leading = span_positions_only(full, POSITIONS)
    batch = random_pairs(lengths)
    with torch.inference_mode():
        expected, got = full(batch), leading(batch)
    width = min(POSITIONS, max(lengths))
    assert got.start.shape == got.end.shape == (len(lengths), width)
    # padded positions of short rows hold garbage in both; a pair's own positions must agree
    own = batch.attention_mask[:, :width].bool()
    torch.testing.assert_close(got.start[own], expected.start[:, :width][own], rtol=0, atol=1e-5)
    torch.testing.assert_close(got.end[own], expected.end[:, :width][own], rtol=0, atol=1e-5)
    torch.testing.assert_close(got.rerank, expected.rerank, rtol=0, atol=1e-5)


def test_the_copy_leaves_the_reader_and_its_weights_alone() -> None:
    reader = tiny_reader("sdpa")
    keys = list(reader.state_dict())
    leading = span_positions_only(reader, POSITIONS)
    assert leading is not reader and list(reader.state_dict()) == keys
    with torch.inference_mode():
        assert reader(random_pairs([12])).start.shape == (1, 12)


def test_a_last_layer_the_shortened_one_scores_otherwise_keeps_the_whole_reader(
        caplog: pytest.LogCaptureFixture) -> None:
    # e.g. a transformers version whose BERT layer computes otherwise: here its output is shifted after the layer,
    # which the shortened copy (built from the layer's parts, not its forward) does not do
    reader = tiny_reader("sdpa")
    reader.encoder.encoder.layer[-1].register_forward_hook(
        lambda layer, inputs, output: (output[0] + 1, *output[1:]) if isinstance(output, tuple) else output + 1)
    assert span_positions_only(reader, POSITIONS) is reader
    assert "the shortened layer scored differently" in caplog.text
    as_it_is = tiny_reader("sdpa")
    assert span_positions_only(as_it_is, POSITIONS) is not as_it_is  # the layer without the shift is shortened


def test_other_architectures_are_returned_as_they_are() -> None:
    config = MPNetConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64)
    reader = Reader(encoder_from_config(config))
    assert span_positions_only(reader, POSITIONS) is reader


def test_the_linker_finds_what_the_full_reader_finds(tiny_linker: Linker, tiny_checkpoint: Path) -> None:
    full = dataclasses.replace(tiny_linker, reading=dataclasses.replace(tiny_linker.reading,
                                                                        reader=load_reader(tiny_checkpoint)))
    assert tiny_linker.reading.reader is not full.reading.reader
    for text in (TEXT, TRICKY):
        expected, got = full.link(text), tiny_linker.link(text)
        assert [(m.start, m.end, m.uri) for m in got] == [(m.start, m.end, m.uri) for m in expected] != []
        assert [m.score for m in got] == pytest.approx([m.score for m in expected])
        spans = [(m.start, m.end) for m in expected]
        given, given_full = tiny_linker.link(text, spans), full.link(text, spans)
        assert [m.uri for m in given] == [m.uri for m in given_full]
        assert [m.score for m in given] == pytest.approx([m.score for m in given_full])


def test_the_encoders_run_without_cudnn_attention() -> None:
    # cuDNN's attention plans every new shape anew, ~0.1 s each on a GPU (annotator/model/attention.py)
    reader = tiny_reader("sdpa")
    retriever = DualEncoder(reader.encoder)
    cudnn_allowed = []
    reader.encoder.register_forward_pre_hook(lambda *_: cudnn_allowed.append(torch.backends.cuda.cudnn_sdp_enabled()))
    with torch.inference_mode():
        reader(random_pairs([5, 3]))
        retriever.embed_passages(random_pairs([5, 3]))
    assert cudnn_allowed == [False, False]
    assert torch.backends.cuda.cudnn_sdp_enabled()  # only within the passes
