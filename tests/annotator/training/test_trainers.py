from __future__ import annotations

import json
import random

import pytest
import torch

from annotator.checkpoint import load_reader, load_retriever, save_checkpoint
from annotator.train import main
from annotator.training.data import TitleLookup, build_documents, load_kb, read_nif_corpus
from annotator.training.loop import make_optimizer
from annotator.training.reader_trainer import ReaderTrainer, ReaderTrainingConfig
from annotator.training.retriever_trainer import RetrieverTrainer, RetrieverTrainingConfig


@pytest.fixture
def corpus(corpus_path, kb_path, builder):
    kb = load_kb(kb_path)
    return kb, build_documents(read_nif_corpus(corpus_path), builder, TitleLookup(kb))


def loss_before_and_after_one_step(trainer, model, batch, config) -> tuple[float, float]:
    optimizer, _ = make_optimizer(model, config, total_steps=1)
    model.train()
    trainer.rng = random.Random(0)  # the same negatives and dropout in both evaluations
    loss = trainer.loss(batch)
    loss.backward()
    optimizer.step()
    trainer.rng = random.Random(0)
    with torch.no_grad():
        after = trainer.loss(batch)
    return loss.item(), after.item()


def test_one_retriever_step_lowers_the_loss(corpus, retriever, builder, linker_config):
    kb, docs = corpus
    config = RetrieverTrainingConfig(lr=1e-3, warmup=0.0, negatives=4, hard_kb_size=5, eval_kb_size=5)
    trainer = RetrieverTrainer(retriever, builder, kb, docs, docs, config=config, linker_config=linker_config,
                               device=torch.device("cpu"))
    trainer.mine_hard_negatives(0)
    assert all(not set(hard) & p.gold_rows for hard, p in zip(trainer.hard, trainer.passages))
    before, after = loss_before_and_after_one_step(trainer, retriever, trainer.batches(0)[0], config)
    assert after < before


def test_one_reader_step_lowers_the_loss(corpus, retriever, reader, builder, linker_config, tmp_path):
    kb, docs = corpus
    config = ReaderTrainingConfig(lr=1e-3, warmup=0.0, candidates=3, candidate_kb_size=5, eval_kb_size=5)
    trainer = ReaderTrainer(reader, retriever, builder, kb, docs, docs, config=config, linker_config=linker_config,
                            device=torch.device("cpu"), out=tmp_path)
    for example in trainer.examples:
        assert example.passage.gold_rows <= set(example.candidates)  # all golds are candidates in training
    before, after = loss_before_and_after_one_step(trainer, reader, trainer.batches(0)[0], config)
    assert after < before


def test_save_then_load_gives_identical_outputs(retriever, reader, builder, linker_config, tmp_path):
    save_checkpoint(tmp_path, config=linker_config, tokenizer=builder.tokenizer, retriever=retriever, reader=reader,
                    dtype=torch.float32)
    batch = builder.pad(builder.entity_inputs(["Ada Lovelace", "Paris"], ["An English mathematician.", ""]))
    retriever.eval()
    reader.eval()
    loaded_retriever, loaded_reader = load_retriever(tmp_path, linker_config), load_reader(tmp_path)
    with torch.no_grad():
        assert torch.equal(retriever.embed_entities(batch), loaded_retriever.embed_entities(batch))
        assert torch.equal(retriever.embed_passages(batch), loaded_retriever.embed_passages(batch))
        expected, got = reader(batch), loaded_reader(batch)
    for name in ("start", "end", "rerank"):
        assert torch.equal(getattr(expected, name), getattr(got, name))


def test_command_line_trains_both_modules_and_resumes(corpus_path, kb_path, encoder_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("ENTQA_CACHE", str(tmp_path / "cache"))
    common = ["--train", str(corpus_path), "--dev", str(corpus_path), "--kb", str(kb_path), "--batch-size", "2",
              "--max-entity-len", "24", "--eval-kb-size", "3", "--threads", "1", "--seed", "3"]
    retriever_dir, reader_dir = tmp_path / "retriever", tmp_path / "reader"
    assert main(["retriever", *common, "--out", str(retriever_dir), "--encoder", str(encoder_dir),
                 "--negatives", "3", "--hard-kb-size", "3", "--epochs", "2"]) == 0
    assert (retriever_dir / "retriever").is_dir() and (retriever_dir / "last" / "training_state.pt").is_file()
    metrics = [json.loads(line) for line in (retriever_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["epoch"] for m in metrics] == [1, 2] and "document_R@10" in metrics[0]
    saved = json.loads((retriever_dir / "retriever_training_config.json").read_text())
    assert saved["negatives"] == 3 and saved["epochs"] == 2
    # Resuming a finished run evaluates nothing more.
    assert main(["retriever", *common, "--out", str(retriever_dir), "--encoder", str(encoder_dir),
                 "--negatives", "3", "--hard-kb-size", "3", "--epochs", "2", "--resume"]) == 0
    assert len((retriever_dir / "metrics.jsonl").read_text().splitlines()) == 2

    assert main(["reader", *common, "--out", str(reader_dir), "--retriever", str(retriever_dir),
                 "--candidates", "3", "--candidate-kb-size", "3"]) == 0
    assert (reader_dir / "reader").is_dir() and (reader_dir / "retriever").is_dir()
    assert "f1" in json.loads((reader_dir / "metrics.jsonl").read_text().splitlines()[0])
