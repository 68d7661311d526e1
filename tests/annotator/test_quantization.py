"""int8 on the CPU: the copy leaves the model alone, stays close to fp32, and is what the linker runs."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from torch import nn

from annotator import DEFAULT_MODEL_DIR
from annotator.checkpoint import load_checkpoint_tokenizer, load_config, load_reader
from annotator.pipeline import Linker, cpu_int8
from annotator.quantization import int8_copy, precision
from annotator.tokenization import InputBuilder


def test_int8_copy_leaves_the_original_in_float() -> None:
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    before = [p.detach().clone() for p in model.parameters()]
    quantized = int8_copy(model)
    assert precision(model) == "float32" and precision(quantized) == "int8"
    assert all(isinstance(m, nn.Linear) for m in (model[0], model[2]))
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_int8_reader_stays_close_to_fp32() -> None:
    # The shipped weights: a random tiny model's logits are too flat to say anything about int8 error.
    config = load_config(DEFAULT_MODEL_DIR)
    builder = InputBuilder(load_checkpoint_tokenizer(DEFAULT_MODEL_DIR), config)
    reader = load_reader(DEFAULT_MODEL_DIR).float().eval()
    document = builder.tokenize_document("SOCCER - Lyon beat Paris Saint-Germain 2-1 in the French league.")
    passage = builder.passage_input(builder.split_passages(document)[0], document.topic_ids)
    entities = builder.entity_inputs(["Olympique Lyonnais", "Lyon", "Paris Saint-Germain F.C.", "Paris"],
                                     ["French football club", "city in France", "French football club", ""])
    pairs = [builder.reader_input(passage, ids) for ids in entities]
    batch = builder.pad([ids for ids, _ in pairs], [segments for _, segments in pairs])
    with torch.inference_mode():
        full, low = reader(batch), int8_copy(reader)(batch)
    assert not torch.equal(full.start, low.start), "the int8 copy computes differently"
    width = len(passage)  # padding positions are never decoded
    for a, b in ((full.start, low.start), (full.end, low.end)):
        assert np.corrcoef(a[:, :width].flatten().numpy(), b[:, :width].flatten().numpy())[0, 1] > 0.97
    assert torch.equal(full.rerank.argmax(), low.rerank.argmax())


def test_the_cpu_linker_runs_int8_unless_told_not_to(tiny_checkpoint: Path, tiny_kb: Path, entqa_cache: Path,
                                                    tiny_linker: Linker) -> None:
    linker = Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu")
    assert linker.describe()["device"] == "cpu int8"
    assert tiny_linker.describe()["device"] == "cpu float32"  # built with cpu_int8=False
    text = "Lyon beat Paris in Zürich."
    for mention in linker.link(text):
        assert text[mention.start:mention.end] == mention.surface


def test_cpu_int8_is_int8_on_the_cpu_only_when_configured(tiny_linker: Linker) -> None:
    retriever = tiny_linker.retriever
    assert cpu_int8(retriever, tiny_linker.config) is retriever
    encoder = cpu_int8(retriever, tiny_linker.config.replace(cpu_int8=True))
    assert precision(encoder) == "int8" and precision(retriever) == "float32"


def test_the_index_manifest_names_the_encoding_precision(tiny_linker: Linker) -> None:
    manifest = json.loads((tiny_linker.index.directory / "manifest.json").read_text())
    assert manifest["encoded_with"] == "float32"
