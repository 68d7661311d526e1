"""Tests for annotator.entity_index: build → save → load, exact top-K, resumable builds, identity checks."""
from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import numpy as np
import pytest
import torch
from transformers import PreTrainedTokenizerBase

import annotator.entity_index.build
import annotator.entity_index.search
from annotator.model.checkpoint import load_config, load_retriever
from annotator import DEFAULT_MODEL_DIR
from annotator.entity_index import INDEX_FACTORIES, MANIFEST, EntityIndex, identity_key, index_identity
from annotator.entity_index.search import Bf16ExactIndex
from annotator.errors import ConfigError, ModelLoadError
from annotator.kb.reading import read_kb
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import InputBuilder
from annotator.runtime.settings import IndexType
from tests.support.brute_force import brute_force

# kb_fingerprint of ../shared/data/kb/entities.jsonl.gz, the KB the shipped one was cut from.
DEVELOPMENT_KB_FINGERPRINT = "823fa53cbfc49956865af15008bddd147169666a3c069708591c7e80c07fbb92"


@pytest.fixture(scope="module")
def retriever(tiny_checkpoint: Path) -> DualEncoder:
    return load_retriever(tiny_checkpoint, load_config(tiny_checkpoint))


@pytest.fixture(scope="module")
def builder(tiny_checkpoint: Path, tokenizer: PreTrainedTokenizerBase) -> InputBuilder:
    return InputBuilder(tokenizer, load_config(tiny_checkpoint))


def build(directory: Path, kb: Path, retriever: DualEncoder, builder: InputBuilder, **options) -> EntityIndex:
    return EntityIndex.build(directory, kb_path=kb, encoder=retriever, builder=builder, checkpoint_id="tiny",
                             use_gpu=False, **options)


@pytest.mark.parametrize("bf16", [False, True], ids=["faiss flat", "bf16 candidates"])
def test_saved_index_loads_and_matches_brute_force(tmp_path: Path, tiny_kb: Path, retriever: DualEncoder,
                                                    builder: InputBuilder, bf16: bool,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    build(tmp_path, tiny_kb, retriever, builder, batch_size=5)
    monkeypatch.setattr(annotator.entity_index.search, "multiplies_bf16", lambda: bf16)
    index = EntityIndex.load(tmp_path, use_gpu=False)
    assert isinstance(index.index, Bf16ExactIndex) == bf16
    assert index.titles == [e.title for e in read_kb(tiny_kb)]
    assert index.qids[0] == "Q90" and index.qids[1] is None
    queries = np.random.default_rng(0).standard_normal((6, index.dim)).astype(np.float32)
    scores, rows = index.search(queries, 5)
    expected_scores, expected_rows = brute_force(np.asarray(index.embeddings), queries, 5)
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("chunk", [10_000, 5], ids=["one chunk, in process", "3 chunks, process pool"])
def test_vectors_and_ids_are_the_entity_tower_of_the_stored_inputs(tmp_path: Path, tiny_kb: Path,
                                                                   retriever: DualEncoder, builder: InputBuilder,
                                                                   chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(annotator.entity_index.build, "TOKENIZE_CHUNK", chunk)
    index = build(tmp_path, tiny_kb, retriever, builder, batch_size=4)
    assert index.titles == [e.title for e in read_kb(tiny_kb)]
    entities = list(read_kb(tiny_kb))
    expected_ids = builder.entity_inputs([e.title for e in entities], [e.text for e in entities])
    assert index.entity_token_ids(range(len(entities))) == expected_ids
    with torch.inference_mode():
        expected = retriever.embed_entities(builder.pad(expected_ids)).numpy()
    np.testing.assert_allclose(np.asarray(index.embeddings, dtype=np.float32), expected, atol=2e-3)


def test_k_beyond_the_kb_returns_every_entity(tmp_path: Path, tiny_kb: Path, retriever: DualEncoder,
                                              builder: InputBuilder) -> None:
    index = build(tmp_path, tiny_kb, retriever, builder)
    _, rows = index.search(np.ones((1, index.dim), dtype=np.float32), 100)
    assert sorted(rows[0].tolist()) == list(range(12))


def test_an_hnsw_index_builds_and_searches(tmp_path: Path, tiny_kb: Path, retriever: DualEncoder,
                                           builder: InputBuilder) -> None:
    index = build(tmp_path, tiny_kb, retriever, builder, index_type="hnsw")
    assert index.index_type == "hnsw" and (tmp_path / "faiss-hnsw.index").is_file()
    scores, rows = index.search(np.asarray(index.embeddings[:3], dtype=np.float32), 3)
    assert rows.shape == (3, 3) and ((rows >= 0) | np.isneginf(scores)).all()
    # Exact on a KB this small: HNSW visits every node.
    np.testing.assert_array_equal(rows, brute_force(np.asarray(index.embeddings),
                                                    np.asarray(index.embeddings[:3], dtype=np.float32), 3)[1])


def test_unknown_index_type_lists_the_valid_ones(tmp_path: Path, tiny_kb: Path, retriever: DualEncoder,
                                                 builder: InputBuilder) -> None:
    with pytest.raises(ConfigError, match=r"'ivfpq'.*\['flat', 'hnsw'\]"):
        build(tmp_path, tiny_kb, retriever, builder, index_type="ivfpq")  # bench.index_scaling's own


def test_the_index_types_a_setting_names_are_the_ones_built() -> None:
    assert set(get_args(IndexType)) == set(INDEX_FACTORIES)


def test_the_shipped_checkpoint_keeps_the_identities_of_its_built_indexes() -> None:
    # The shipped index's manifest, and the cache folder of the 1M-entity development KB's index (25 min to build
    # again), are found by these identities: a config change must not move them.
    config = load_config(DEFAULT_MODEL_DIR)
    shipped = json.loads((DEFAULT_MODEL_DIR / "index" / MANIFEST).read_text(encoding="utf-8"))["identity"]
    checkpoint = shipped["checkpoint"]
    assert index_identity(kb_path=DEFAULT_MODEL_DIR / "kb" / "entities.jsonl.gz", checkpoint_id=checkpoint,
                          config=config) == shipped
    development = {**index_identity(kb_path=None, checkpoint_id=checkpoint, config=config),
                   "kb_fingerprint": DEVELOPMENT_KB_FINGERPRINT, "kb_limit": None}
    assert identity_key(development) == "0a0f8d58bcc25ee7"


def test_load_rejects_an_index_of_another_kb_or_checkpoint(tmp_path: Path, tiny_kb: Path, retriever: DualEncoder,
                                                           builder: InputBuilder) -> None:
    build(tmp_path / "index", tiny_kb, retriever, builder)
    config = builder.config
    EntityIndex.load(tmp_path / "index", identity=index_identity(kb_path=tiny_kb, checkpoint_id="tiny",
                                                                 config=config), use_gpu=False)
    other_kb = tmp_path / "other.jsonl"
    other_kb.write_text('{"title": "Paris", "text": ""}\n', encoding="utf-8")
    with pytest.raises(ModelLoadError, match="kb_fingerprint"):
        EntityIndex.load(tmp_path / "index", identity=index_identity(kb_path=other_kb, checkpoint_id="tiny",
                                                                     config=config))
    with pytest.raises(ModelLoadError, match="checkpoint"):
        EntityIndex.load(tmp_path / "index", identity=index_identity(kb_path=None, checkpoint_id="other",
                                                                     config=config))
    with pytest.raises(ModelLoadError, match="no finished entity index"):
        EntityIndex.load(tmp_path / "missing")


def test_interrupted_build_resumes_without_re_encoding(tmp_path: Path, tiny_kb: Path, retriever: DualEncoder,
                                                       builder: InputBuilder,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    reference = build(tmp_path / "reference", tiny_kb, retriever, builder, batch_size=2)
    monkeypatch.setattr(annotator.entity_index.build, "SAVE_EVERY_BATCHES", 1)
    calls: list[int] = []
    original = DualEncoder.embed_entities

    def failing_after_three(self: DualEncoder, batch):  # noqa: ANN001, ANN202
        calls.append(len(batch.input_ids))
        if len(calls) == 4:
            raise KeyboardInterrupt
        return original(self, batch)

    monkeypatch.setattr(DualEncoder, "embed_entities", failing_after_three)
    with pytest.raises(KeyboardInterrupt):
        build(tmp_path / "resumed", tiny_kb, retriever, builder, batch_size=2)
    calls.clear()
    monkeypatch.setattr(DualEncoder, "embed_entities", lambda self, batch: (calls.append(1), original(self, batch))[1])
    resumed = build(tmp_path / "resumed", tiny_kb, retriever, builder, batch_size=2)
    assert len(calls) == 6 - 3  # 12 entities in batches of 2; three were saved before the interruption
    np.testing.assert_array_equal(np.asarray(resumed.embeddings), np.asarray(reference.embeddings))
    assert not (tmp_path / "resumed" / "progress.json").exists()


def test_a_new_index_type_reuses_the_stored_vectors(tmp_path: Path, tiny_kb: Path, retriever: DualEncoder,
                                                    builder: InputBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    flat = build(tmp_path, tiny_kb, retriever, builder)
    with pytest.raises(ModelLoadError, match="no hnsw index.*--index-type hnsw"):
        EntityIndex.load(tmp_path, index_type="hnsw", use_gpu=False)

    def not_again(self: DualEncoder, batch):  # noqa: ANN001, ANN202
        raise AssertionError("the KB was encoded a second time")

    monkeypatch.setattr(DualEncoder, "embed_entities", not_again)
    hnsw = build(tmp_path, tiny_kb, retriever, builder, index_type="hnsw")
    assert hnsw.index_type == "hnsw" and hnsw.index.ntotal == len(flat)
    assert EntityIndex.load(tmp_path, use_gpu=False).index_type == "flat"  # both stay available
    np.testing.assert_array_equal(np.asarray(hnsw.embeddings), np.asarray(flat.embeddings))
