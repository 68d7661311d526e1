"""The encoder cost bench on the tiny checkpoint's encoder: real pairs in the shipped shape, every figure printed."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from transformers import PreTrainedTokenizerBase

from annotator.model.config import LinkerConfig
from annotator.runtime.settings import RuntimeSettings
from annotator.training.data import load_kb
from bench import encoder_cost
from tests.conftest import RESOURCES

DATASET = Path(__file__).resolve().parents[1] / "resources" / "gerbil" / "gerbil_shape.ttl"
KB = RESOURCES / "kb_shared.jsonl"


@pytest.fixture(scope="module")
def tiny_encoder(tiny_checkpoint: Path, tokenizer: PreTrainedTokenizerBase,
                 tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A base encoder folder: the tiny checkpoint's architecture with the tokenizer beside it."""
    folder = tmp_path_factory.mktemp("tiny-encoder")
    shutil.copy(tiny_checkpoint / "encoder" / "config.json", folder)
    tokenizer.save_pretrained(str(folder))
    return folder


def test_the_reader_reads_every_passage_with_k_candidates_in_batches_of_32(tiny_encoder: Path) -> None:
    config = LinkerConfig()
    kb = load_kb(KB)
    texts = ["SOCCER - Lyon beat Paris Saint-Germain 2-1 in the French league on Saturday in front of 40,000 fans "
             "at the Stade de Gerland, their third win in a row since the coach left for Marseille in August."]
    models = encoder_cost.build(str(tiny_encoder), config, texts, kb.titles, kb.texts, passages=2, seed=0)
    assert len(models.passages) == 2 and all(len(p) <= config.passage_len + config.max_topic_len
                                             for p in models.passages)
    assert models.pairs == 2 * config.top_k
    assert all(len(batch.input_ids) <= RuntimeSettings().reader_batch_size for batch in models.reader_batches)
    assert models.shortened and models.attention_fused  # a BERT reader runs as the linker runs it
    assert max(len(e) for e in models.entities) <= config.max_entity_len
    assert all(models.timed(figure) > 0 for figure in encoder_cost.FIGURES)


def test_the_bench_prints_each_figure_with_its_ratio_and_the_pipeline_estimate(
        tiny_encoder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["encoder_cost", "--encoders", str(tiny_encoder), str(tiny_encoder),
                                      "--dataset", str(DATASET), "--kb", str(KB), "--passages", "2",
                                      "--rounds", "1", "--reader-share", "0.9", "--passage-share", "0.05"])
    encoder_cost.main()
    lines = capsys.readouterr().out.splitlines()
    for figure in encoder_cost.FIGURES:
        line = next(line for line in lines if line.startswith(f"{figure} ("))
        assert "'s time)" in line  # the second encoder's ratio to the first
    assert sum(line.startswith("index build of 1,002,521 entities") for line in lines) == 2
    assert any(line.startswith("shipped pipeline, 1,512 ms/doc (90% int8 reader passes, 5% passage tower)")
               for line in lines)
