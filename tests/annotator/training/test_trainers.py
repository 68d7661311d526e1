from __future__ import annotations

import json
import random
from functools import partial

import pytest
import torch

from annotator.model.checkpoint import (load_checkpoint_tokenizer, load_config, load_reader, load_retriever,
                                  save_checkpoint)
from annotator.entity_index import weights_identity
from annotator.entity_index.__main__ import build_index
from annotator.entity_index import cached_index_dir, entity_tower_id
from annotator.model.checkpoint import MENTION_TABLE
from annotator.training.data import TitleLookup, build_documents, load_kb
from annotator.training.entity_tower_trainer import EntityTowerTrainer, EntityTowerTrainingConfig
from annotator.training.loop import TrainingConfig, autocast, encode, make_optimizer
from annotator.training.passage_tower_trainer import PassageTowerTrainer, PassageTowerTrainingConfig, split_towers
from annotator.training.reader_trainer import ReaderTrainer, ReaderTrainingConfig
from annotator.training.retriever_trainer import RetrieverTrainer, RetrieverTrainingConfig
from annotator.cli.corpora import corpus_documents, read_corpus, read_dataset
from annotator.cli.train import main
from gerbil.experiment import linker_scores
from gerbil.run import main as gerbil_run


@pytest.fixture
def corpus(corpus_path, kb_path, builder):
    kb = load_kb(kb_path)
    return kb, build_documents(read_corpus(corpus_path), builder, TitleLookup(kb))


def loss_before_and_after_one_step(trainer, model, batch, config) -> tuple[float, float]:
    """The loss of `batch`, then again after one optimiser step, both computed as `run_training` does."""
    optimizer, _ = make_optimizer(model, config, total_steps=1)
    model.train()
    trainer.rng = random.Random(0)  # the same negatives and dropout in both evaluations
    with autocast(torch.device("cpu"), cpu_bf16=config.cpu_bf16):
        loss = trainer.loss(batch)
    loss.backward()
    optimizer.step()
    trainer.rng = random.Random(0)
    with torch.no_grad(), autocast(torch.device("cpu"), cpu_bf16=config.cpu_bf16):
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


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_one_reader_step_lowers_the_loss(precision, corpus, retriever, reader, builder, linker_config, tmp_path):
    kb, docs = corpus
    config = ReaderTrainingConfig(lr=1e-3, warmup=0.0, candidates=3, candidate_kb_size=5, eval_kb_size=5,
                                  cpu_precision=precision)
    trainer = ReaderTrainer(reader, retriever, builder, kb, docs, docs, config=config, linker_config=linker_config,
                            device=torch.device("cpu"), out=tmp_path)
    for example in trainer.examples:
        assert example.passage.gold_rows <= set(example.candidates)  # all golds are candidates in training
    before, after = loss_before_and_after_one_step(trainer, reader, trainer.batches(0)[0], config)
    assert after < before
    # bf16 autocast computes the forward pass in bf16; the weights the optimiser updates stay fp32.
    assert {p.dtype for p in reader.parameters()} == {torch.float32}


@pytest.mark.slow  # two linkers loaded over the checkpoint: ~10 s
def test_reader_dev_scores_are_what_gerbil_run_prints_for_the_checkpoint(corpus_path, kb_path, retriever, reader,
                                                                          builder, linker_config, tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("ENTQA_CACHE", str(tmp_path / "cache"))
    kb, dataset = load_kb(kb_path), read_dataset(corpus_path)
    docs = build_documents(corpus_documents(dataset.documents), builder, TitleLookup(kb))
    linker_config = linker_config.replace(threshold=0.0)  # every span beating [CLS]: a random reader links some
    config = ReaderTrainingConfig(candidates=3, candidate_kb_size=5, eval_kb_size=5, eval_top_k=linker_config.top_k)
    trainer = ReaderTrainer(reader, retriever, builder, kb, docs, docs, config=config, linker_config=linker_config,
                            device=torch.device("cpu"), out=tmp_path, linking_scores=partial(linker_scores, dataset))
    scores = trainer.evaluate(1)
    output = tmp_path / "gerbil.json"
    assert gerbil_run(["--in-process", str(tmp_path / "dev_eval"), "--kb", str(trainer.eval_kb_path),
                       "--dataset", f"dev={corpus_path}", "--output", str(output)]) == 0
    [result] = json.loads(output.read_text())
    inkb = result["scores"]["inkb"]
    assert inkb["counts"]["tp"] + inkb["counts"]["fp"] > 0  # the linker answered
    assert scores["f1"] == scores["score"] == 100 * inkb["micro"]["f1"]
    assert (scores["precision"], scores["recall"]) == (100 * inkb["micro"]["precision"], 100 * inkb["micro"]["recall"])


@pytest.mark.parametrize(("amx", "avx512_bf16", "bf16"),
                         [(False, False, False), (True, False, True), (False, True, True), (True, True, True)])
def test_cpu_training_autocasts_to_bf16_where_the_cpu_multiplies_bf16_unless_told(amx, avx512_bf16, bf16, monkeypatch):
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    assert TrainingConfig().cpu_bf16 is bf16
    assert not TrainingConfig(cpu_precision="fp32").cpu_bf16 and TrainingConfig(cpu_precision="bf16").cpu_bf16
    with autocast(torch.device("cpu"), cpu_bf16=TrainingConfig().cpu_bf16):
        product = torch.ones(2, 2) @ torch.ones(2, 2)
    assert product.dtype == (torch.bfloat16 if bf16 else torch.float32)
    with pytest.raises(ValueError, match="int8"):
        TrainingConfig(cpu_precision="int8")  # int8 is an inference precision


@pytest.fixture
def split_retriever(shared_retriever, linker_config):
    return split_towers(shared_retriever, linker_config.replace(shared_towers=True))


def test_passage_tower_step_lowers_the_loss_and_leaves_the_entity_tower_alone(corpus, split_retriever, builder):
    kb, docs = corpus
    retriever, linker_config = split_retriever
    entity_tower = weights_identity(retriever.entity_tower)
    vectors = encode(retriever.embed_entities, builder, builder.entity_inputs(kb.titles, kb.texts), batch_size=4,
                     device=torch.device("cpu"), desc="entities")
    config = PassageTowerTrainingConfig(lr=1e-3, warmup=0.0)
    trainer = PassageTowerTrainer(retriever, builder, kb, vectors, docs, docs, config=config,
                                  linker_config=linker_config, device=torch.device("cpu"))
    before, after = loss_before_and_after_one_step(trainer, retriever, trainer.batches(0)[0], config)
    assert after < before
    assert weights_identity(retriever.entity_tower) == entity_tower  # the index built before stays valid
    assert retriever.passage_encoder.get_input_embeddings() is retriever.entity_tower.get_input_embeddings()
    assert "passage_R@100" in trainer.evaluate(1)


@pytest.mark.parametrize("dropout", [None, 1.0, 0.0])
def test_passage_tower_shows_described_golds_title_only_with_the_frozen_tower(dropout, corpus, split_retriever,
                                                                              builder):
    kb, docs = corpus
    retriever, linker_config = split_retriever
    vectors = encode(retriever.embed_entities, builder, builder.entity_inputs(kb.titles, kb.texts), batch_size=4,
                     device=torch.device("cpu"), desc="entities")
    trainer = PassageTowerTrainer(retriever, builder, kb, vectors, docs, docs,
                                  config=PassageTowerTrainingConfig(description_dropout=dropout),
                                  linker_config=linker_config, device=torch.device("cpu"))
    golds = [g for p in trainer.passages for g in p.gold_rows]
    described = sorted({g for g in golds if kb.texts[g]})
    draws = [trainer.shown_title_only(trainer.passages) for _ in range(400)]
    if dropout == 0.0:
        assert all(shown is None for shown in draws)
        return
    if dropout is None:  # chosen so that golds are title-only as often as the KB's entries
        share, kb_share = kb.title_only_share(golds), kb.title_only_share()
        assert 0 < trainer.p_gold < 1
        assert share + (1 - share) * trainer.p_gold == pytest.approx(kb_share)
        dropped = sum(len(shown[0]) for shown in draws if shown is not None)
        assert dropped / (400 * len(described)) == pytest.approx(trainer.p_gold, abs=0.05)
    else:
        assert all(shown[0].tolist() == described for shown in draws)
        with torch.no_grad():  # the loss scores those golds by their title-only vectors
            retriever.eval()
            batch = trainer.batches(0)[0]
            loss = trainer.loss(batch)
            rows, title_only = trainer.shown_title_only([trainer.passages[i] for i in batch])
            trainer.entities = trainer.entities.clone()
            trainer.entities[rows] = title_only
            trainer.title_only_vectors = None
            assert torch.allclose(trainer.loss(batch), loss)
    rows, title_only = next(shown for shown in draws if shown is not None)
    assert set(rows.tolist()) <= set(described)
    expected = encode(retriever.embed_entities, builder, builder.entity_inputs([kb.titles[r] for r in rows], [""] * len(rows)),
                      batch_size=4, device=torch.device("cpu"), desc="title-only")
    assert torch.allclose(title_only, expected, atol=1e-6)
    assert not torch.allclose(title_only, vectors[rows], atol=1e-3)


@pytest.mark.parametrize("both_towers", [False, True])
def test_entity_tower_step_lowers_the_loss_and_trains_the_passage_tower_only_if_asked(both_towers, corpus,
                                                                                     split_retriever, builder):
    kb, docs = corpus
    retriever, linker_config = split_retriever
    passage_tower, entity_tower = weights_identity(retriever.passage_encoder), weights_identity(retriever.entity_tower)
    word_embeddings = weights_identity(retriever.passage_encoder.get_input_embeddings())
    vectors = encode(retriever.embed_entities, builder, builder.entity_inputs(kb.titles, kb.texts), batch_size=4,
                     device=torch.device("cpu"), desc="entities")
    config = EntityTowerTrainingConfig(lr=1e-3, warmup=0.0, negatives=4, hard_per_passage=2, eval_kb_size=2,
                                       eval_competitors=1, both_towers=both_towers)
    trainer = EntityTowerTrainer(retriever, builder, kb, vectors, docs, docs, config=config,
                                 linker_config=linker_config, device=torch.device("cpu"))
    trainer.mine_hard_negatives(0)
    assert any(trainer.hard)
    assert all(not set(hard) & p.gold_rows for hard, p in zip(trainer.hard, trainer.passages))
    # each dev passage's best entity under the index is in the evaluation index, beside the golds
    retriever.eval()  # as the trainer encoded them, with the passage tower it was given
    dev = encode(retriever.embed_passages, builder, [p.input_ids for d in docs for p in d.passages],
                 batch_size=config.encode_batch_size, device=torch.device("cpu"), desc="dev")
    best = (dev @ vectors.T).argmax(1)
    assert set(best.tolist()) | {g for d in docs for g in d.gold_rows} <= set(trainer.eval_rows)
    before, after = loss_before_and_after_one_step(trainer, retriever, trainer.batches(0)[0], config)
    assert after < before
    assert (weights_identity(retriever.passage_encoder) != passage_tower) == both_towers
    assert weights_identity(retriever.passage_encoder.get_input_embeddings()) == word_embeddings  # shared, frozen
    assert weights_identity(retriever.entity_tower) != entity_tower
    assert "passage_R@100" in trainer.evaluate(1)


def test_split_towers_store_shared_embeddings_once(split_retriever, builder, tmp_path):
    retriever, linker_config = split_retriever
    with torch.no_grad():  # make the towers differ, as training would
        next(retriever.passage_encoder.encoder.parameters()).add_(0.5)
    save_checkpoint(tmp_path, config=linker_config, tokenizer=builder.tokenizer, retriever=retriever,
                    dtype=torch.float32)
    loaded = load_retriever(tmp_path, linker_config)
    assert loaded.passage_encoder.get_input_embeddings() is loaded.entity_tower.get_input_embeddings()
    batch = builder.pad(builder.entity_inputs(["Ada Lovelace"], ["An English mathematician."]))
    retriever.eval()
    with torch.no_grad():
        assert torch.equal(retriever.embed_passages(batch), loaded.embed_passages(batch))
        assert torch.equal(retriever.embed_entities(batch), loaded.embed_entities(batch))
        assert not torch.equal(loaded.embed_passages(batch), loaded.embed_entities(batch))
    from safetensors import safe_open
    names = [n for f in (tmp_path / "retriever").glob("*.safetensors") for n in safe_open(f, "pt").keys()]
    assert sum(n.endswith("word_embeddings.weight") for n in names) == 1


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


@pytest.mark.slow  # the training command line
def test_command_line_trains_both_modules_and_resumes(corpus_path, kb_path, encoder_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("ENTQA_CACHE", str(tmp_path / "cache"))
    common = ["--train", str(corpus_path), "--dev", str(corpus_path), "--kb", str(kb_path), "--batch-size", "2",
              "--max-entity-len", "24", "--eval-kb-size", "3", "--threads", "1", "--seed", "3"]
    retriever_dir, reader_dir = tmp_path / "retriever", tmp_path / "reader"
    assert main(["retriever", *common, "--out", str(retriever_dir), "--encoder", str(encoder_dir), "--shared-towers",
                 "--negatives", "3", "--hard-kb-size", "3", "--epochs", "2"]) == 0
    assert (retriever_dir / "retriever").is_dir() and (retriever_dir / "last" / "training_state.pt").is_file()
    metrics = [json.loads(line) for line in (retriever_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["epoch"] for m in metrics] == [1, 2] and "document_R@10" in metrics[0]
    saved = json.loads((retriever_dir / "retriever_training_config.json").read_text())
    assert saved["negatives"] == 3 and saved["epochs"] == 2
    # Resuming a finished run evaluates nothing more.
    assert main(["retriever", *common, "--out", str(retriever_dir), "--encoder", str(encoder_dir), "--shared-towers",
                 "--negatives", "3", "--hard-kb-size", "3", "--epochs", "2", "--resume"]) == 0
    assert len((retriever_dir / "metrics.jsonl").read_text().splitlines()) == 2

    # Query-side stage: against the KB index of the trained entity tower, which stays valid after it.
    index = build_index(retriever_dir, kb_path)
    tower_dir = tmp_path / "passage_tower"
    assert main(["passage-tower", *common, "--out", str(tower_dir), "--retriever", str(retriever_dir)]) == 0
    assert json.loads((tower_dir / "config.json").read_text())["shared_towers"] is False
    assert "passage_R@100" in json.loads((tower_dir / "metrics.jsonl").read_text().splitlines()[0])
    tower = load_retriever(tower_dir, load_config(tower_dir))
    assert cached_index_dir(kb_path=kb_path, entity_tower_id=entity_tower_id(tower),
                            config=load_config(tower_dir)) == index.directory

    # Entity-side stage: the passage tower stays; a resumed run still reads the index of --retriever's entity tower.
    entity_dir = tmp_path / "entity_tower"
    entity_stage = ["entity-tower", *common, "--out", str(entity_dir), "--retriever", str(tower_dir), "--negatives", "3",
                    "--eval-competitors", "1", "--lr", "1e-3", "--epochs", "2"]
    assert main(entity_stage) == 0
    assert main([*entity_stage, "--resume"]) == 0
    assert len((entity_dir / "metrics.jsonl").read_text().splitlines()) == 2
    tuned = load_retriever(entity_dir / "last", load_config(entity_dir))
    assert weights_identity(tuned.passage_encoder) == weights_identity(tower.passage_encoder)
    assert weights_identity(tuned.entity_tower) != weights_identity(tower.entity_tower)

    # A checkpoint trained from one with a mention table keeps it, and so does the reader's dev-check linker:
    # the config they inherit asks for it.
    assert not (entity_dir / MENTION_TABLE).exists()
    (tower_dir / MENTION_TABLE).write_text("name\ttitle\tcount\nLovelace\tAda Lovelace\t1\n", encoding="utf-8")
    load_config(tower_dir).replace(mention_candidates=1).to_file(tower_dir / "config.json")
    assert main(["reader", *common, "--out", str(reader_dir), "--retriever", str(tower_dir),
                 "--candidates", "3", "--index-dir", str(index.directory)]) == 0
    assert (reader_dir / "reader").is_dir() and (reader_dir / "retriever").is_dir()
    assert (reader_dir / MENTION_TABLE).read_bytes() == (tower_dir / MENTION_TABLE).read_bytes()
    assert "f1" in json.loads((reader_dir / "metrics.jsonl").read_text().splitlines()[0])

    # Fine-tuning from a reader with a zero learning rate must keep its weights, here made unlike any fresh reader's.
    init_dir, tuned_dir = tmp_path / "init", tmp_path / "tuned"
    init_reader, config = load_reader(reader_dir), load_config(reader_dir)
    with torch.no_grad():
        for parameter in init_reader.parameters():
            parameter.add_(0.25)
    save_checkpoint(init_dir, config=config, tokenizer=load_checkpoint_tokenizer(reader_dir),
                    retriever=load_retriever(reader_dir, config), reader=init_reader, dtype=torch.float32)
    assert main(["reader", *common, "--out", str(tuned_dir), "--retriever", str(tower_dir), "--candidates", "3",
                 "--index-dir", str(index.directory), "--init-reader", str(init_dir), "--lr", "0"]) == 0
    assert weights_identity(load_reader(tuned_dir)) == weights_identity(init_reader)
