"""int8 and bf16 on the CPU: the copies leave the model alone, stay close to fp32, and are what the linker runs."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from annotator import DEFAULT_MODEL_DIR
from annotator.model.checkpoint import load_checkpoint_tokenizer, load_config, load_reader, load_retriever
from annotator.errors import ConfigError
from annotator.runtime.onnx_int8 import OnnxInt8EntityEncoder, OnnxInt8Reader
from annotator.pipeline.linker import Linker
from annotator.runtime.precision import cpu_reader, kb_encoder
from annotator.runtime.hardware import cpu_precision
from annotator.runtime.quantization import int8_copy, precision
from annotator.runtime.settings import RuntimeSettings
from annotator.model.reader import ReaderLogits, span_positions_only
from annotator.model.tokenization import InputBuilder, right_padded


def test_int8_copy_leaves_the_original_in_float() -> None:
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    before = [p.detach().clone() for p in model.parameters()]
    quantized = int8_copy(model)
    assert precision(model) == "float32" and precision(quantized) == "int8"
    assert all(isinstance(m, nn.Linear) for m in (model[0], model[2]))
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


@pytest.mark.slow  # the shipped weights
@pytest.mark.parametrize("quantize", [int8_copy, OnnxInt8Reader, "read positions", "bf16"],
                         ids=["torch", "onnxruntime", "onnxruntime, last layer at the read positions", "bf16"])
def test_a_low_precision_reader_stays_close_to_fp32(quantize) -> None:
    # The shipped weights: a random tiny model's logits are too flat to say anything about int8 error.
    config = load_config(DEFAULT_MODEL_DIR)
    builder = InputBuilder(load_checkpoint_tokenizer(DEFAULT_MODEL_DIR), config)
    reader = load_reader(DEFAULT_MODEL_DIR).float().eval()
    document = builder.tokenize_document("SOCCER - Lyon beat Paris Saint-Germain 2-1 in the French league.")
    passage = builder.passage_input(builder.split_passages(document)[0], document.topic_ids)
    entities = builder.entity_inputs(["Olympique Lyonnais", "Lyon", "Paris Saint-Germain F.C.", "Paris"],
                                     ["French football club", "city in France", "French football club", ""])
    batch = builder.reader_batch([passage], np.zeros(len(entities), dtype=np.int64),
                                 *right_padded(entities, builder.pad_id))
    with torch.inference_mode():
        if quantize == "bf16":
            quantized = cpu_reader(reader, builder, "bf16")
        elif quantize == "read positions":  # what the linker runs: only [CLS] and the passage leave the last layer
            quantized = OnnxInt8Reader(span_positions_only(reader, len(passage)), builder, threads=1)
        else:
            quantized = int8_copy(reader) if quantize is int8_copy else OnnxInt8Reader(reader, builder, threads=1)
        full, low = reader(batch), quantized(batch)
        assert torch.equal(reader(batch).start, full.start), "quantizing left the reader alone"
    low = ReaderLogits(*(logits.float() for logits in (low.start, low.end, low.rerank)))
    assert not torch.equal(full.start, low.start), "the copy computes differently"
    width = len(passage)  # padding positions are never decoded
    assert low.start.shape == (full.start.shape[0], width if quantize == "read positions" else full.start.shape[1])
    assert low.rerank.shape == full.rerank.shape
    for a, b in ((full.start, low.start), (full.end, low.end)):
        assert np.corrcoef(a[:, :width].flatten().numpy(), b[:, :width].flatten().numpy())[0, 1] > 0.97
    # Clear decisions survive int8: candidates more than 0.5 apart in fp32 keep their order (the club stays
    # ahead of both Parises; closer pairs may swap: the step-14 reader's club and city, 0.46 apart, do).
    clear = full.rerank[:, None] - full.rerank[None, :] > 0.5
    assert clear.any() and bool((low.rerank[:, None] - low.rerank[None, :] > 0)[clear].all())
    if quantize in (OnnxInt8Reader, "read positions"):
        # Every rerank logit within one unit: over the linker's 2,076 (passage, candidate) pairs of 8 AIDA-A
        # documents the 99th percentile of |int8 - fp32| is 1.08 for the step-17 reader and 0.98 for the shipped
        # mean reader (docs/decisions.md#int8-reader-tolerance).
        assert torch.allclose(full.rerank, low.rerank, atol=1.0)
        assert "QAttention" in quantized.operators  # the padded batch ran through fused int8 attention
    if quantize == "bf16":  # AMX's choice: closer to fp32 than int8
        assert torch.allclose(full.rerank, low.rerank, atol=0.1)


@pytest.mark.slow  # the shipped weights
def test_onnx_int8_entity_vectors_stay_close_to_fp32_whatever_the_padding() -> None:
    config = load_config(DEFAULT_MODEL_DIR)
    builder = InputBuilder(load_checkpoint_tokenizer(DEFAULT_MODEL_DIR), config)
    retriever = load_retriever(DEFAULT_MODEL_DIR, config).float().eval()
    entities = builder.entity_inputs(
        ["Paris", "Olympique Lyonnais", "Germany national football team", "Lyon"],
        ["", "French association football club based in Lyon, playing in Ligue 1 since 1989.",
         "The men's national football team of Germany, four times world champion.", ""])
    encoder = OnnxInt8EntityEncoder(retriever, builder, threads=1)
    assert encoder.dim == retriever.dim and encoder.precision == "onnxruntime int8"
    with torch.inference_mode():
        full = retriever.embed_entities(builder.pad(entities))
        batched = encoder.embed_entities(builder.pad(entities))  # exports on first use
        assert torch.equal(retriever.embed_entities(builder.pad(entities)), full), "the export left the model alone"
    # A short entity padded to the longest one: a mask frozen at export time would let it attend to padding.
    alone = torch.cat([encoder.embed_entities(builder.pad([ids])) for ids in entities])
    assert not torch.equal(full, batched), "the session computes in int8"
    for vectors in (batched, alone):
        assert torch.nn.functional.cosine_similarity(full, vectors).min() > 0.98


@pytest.mark.parametrize(("amx", "expected"), [(False, "onnxruntime int8"), (True, "bfloat16")])
def test_the_cpu_linker_runs_int8_or_on_amx_bf16_unless_told_not_to(
        amx: bool, expected: str, tiny_checkpoint: Path, tiny_kb: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, tiny_linker: Linker) -> None:
    monkeypatch.setenv("ENTQA_CACHE", str(tmp_path))  # its own index, not tiny_linker's fp32 one
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    assert cpu_precision("auto") == ("bf16" if amx else "int8")
    linker = Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu")
    assert linker.describe()["device"] == f"cpu {expected}"
    manifest = json.loads((linker.index.directory / "manifest.json").read_text())
    assert manifest["encoded_with"] == expected
    assert tiny_linker.describe()["device"] == "cpu float32"  # built with cpu_precision="fp32"
    text = "Lyon beat Paris in Zürich."
    for mention in linker.link(text):
        assert text[mention.start:mention.end] == mention.surface


def test_cpu_precision_applies_on_the_cpu_to_copies(tiny_linker: Linker) -> None:
    retriever, builder, reader = tiny_linker.retrieval.retriever, tiny_linker.builder, tiny_linker.reading.reader
    assert cpu_reader(reader, builder, "fp32") is reader and kb_encoder(retriever, builder, "fp32") is retriever
    assert isinstance(cpu_reader(reader, builder, "int8"), OnnxInt8Reader)
    assert isinstance(kb_encoder(retriever, builder, "int8"), OnnxInt8EntityEncoder)
    assert cpu_reader(reader, builder, "bf16").precision == kb_encoder(retriever, builder, "bf16").precision \
        == "bfloat16"
    assert reader.precision == retriever.precision == "float32", "the linker's passage tower stays fp32"
    with pytest.raises(ConfigError, match=r"cpu_precision must be one of \['auto', 'bf16', 'int8', 'fp32'\]"):
        RuntimeSettings(cpu_precision="fp16")


def test_the_index_manifest_names_the_encoding_precision(tiny_linker: Linker) -> None:
    manifest = json.loads((tiny_linker.index.directory / "manifest.json").read_text())
    assert manifest["encoded_with"] == "float32"
