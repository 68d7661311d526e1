"""Shared fixtures: a tiny random-weight EntQA checkpoint, a tiny KB and a linker over both; SIGHUP's handler kept."""
from __future__ import annotations

import gc

gc.disable()  # until the tests are collected: see pytest_collection_finish

import importlib
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from transformers import BertConfig, PreTrainedTokenizerBase

from annotator.model.checkpoint import save_checkpoint
from annotator.model.config import LinkerConfig
from annotator.model.encoders import MINILM, encoder_from_config, load_tokenizer, resolve_encoder
from annotator.pipeline.linker import Linker
from annotator.model.reader import Reader
from annotator.model.retriever import DualEncoder
from annotator.runtime.settings import RuntimeSettings

RESOURCES = Path(__file__).resolve().parent / "resources" / "annotator"

# Small windows so that a sentence already spans several overlapping passages; the paper's pipeline (no mention
# table, no second stage), which the tests of those steps switch on.
TINY_CONFIG = LinkerConfig.paper().replace(passage_len=12, stride=5, max_entity_len=24, top_k=4)
# Full precision: int8 activations are scaled per batch, so only fp32 makes batched, per-pair and per-document
# results exactly comparable (int8 is tested on its own in test_quantization.py). Small batches, so that a document
# takes several.
TINY_RUNTIME = RuntimeSettings(cpu_precision="fp32", reader_batch_size=16, retriever_batch_size=8)


@pytest.fixture(scope="session")
def tokenizer() -> PreTrainedTokenizerBase:
    """The real all-MiniLM-L6-v2 fast tokenizer (BERT uncased wordpieces)."""
    return load_tokenizer(resolve_encoder(MINILM))


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory, tokenizer: PreTrainedTokenizerBase) -> Path:
    """A checkpoint folder with random 2-layer, 32-wide BERT towers and reader (CPU, milliseconds)."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    architecture = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=64, max_position_embeddings=256)
    retriever = DualEncoder(encoder_from_config(architecture), encoder_from_config(architecture))
    reader = Reader(encoder_from_config(architecture))
    return save_checkpoint(tmp_path_factory.mktemp("tiny-entqa"), config=TINY_CONFIG, tokenizer=tokenizer,
                           retriever=retriever, reader=reader)


@pytest.fixture(scope="session")
def tiny_kb() -> Path:
    """Twelve entities in the shared KB format, two of them title-only."""
    return RESOURCES / "kb_shared.jsonl"


@pytest.fixture(scope="session")
def entqa_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """$ENTQA_CACHE pointed at a temporary folder for the whole session."""
    with pytest.MonkeyPatch.context() as patch:
        path = tmp_path_factory.mktemp("entqa-cache")
        patch.setenv("ENTQA_CACHE", str(path))
        yield path


@pytest.fixture(scope="session")
def tiny_linker(tiny_checkpoint: Path, tiny_kb: Path, entqa_cache: Path) -> Linker:
    """A CPU linker over the tiny KB that keeps every span beating [CLS] (γ = 0), in fp32 (`TINY_RUNTIME`)."""
    return Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu", config_overrides={"threshold": 0.0},
                                  runtime=TINY_RUNTIME)


@pytest.fixture(autouse=True)
def sighup_as_it_was() -> Iterator[None]:
    """SIGHUP's handler as before each test: create_app makes SIGHUP reload its linker's KB
    (annotator.service.reloading)."""
    previous = signal.getsignal(signal.SIGHUP)
    yield
    if previous is not None:  # None: set outside Python, left alone
        signal.signal(signal.SIGHUP, previous)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move what the imports and collection made into the collector's permanent generation (`gc.freeze`), then turn
    the collector back on (it was off while torch, transformers and the test modules were imported, where its
    passes over the growing heap took seconds and found next to nothing).

    Every linker load calls release_freed_memory, whose `gc.collect()` otherwise walks the half a million objects of
    those imports each time (about 0.25 s a call, over half the fast tier's time). Objects made by the tests are not
    frozen, so their cycles are collected as before.

    Hypothesis is imported first (the fuzz tests import it anyway, and its pytest plugin does at the summary): on
    import it registers the PRNGs of its plugins (trio's), and warns where `gc.get_referrers` finds no referrer,
    which it would not once their modules are frozen.
    """
    importlib.import_module("hypothesis")
    gc.collect()
    gc.freeze()
    gc.enable()
