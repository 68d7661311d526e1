"""Command line: `entqa train` or `python -m annotator.cli.train retriever|passage-tower|entity-tower|reader
--train T --dev D --kb KB --out DIR [options]`.

The stages, in order: `retriever` (both towers, sampled negatives), optionally `passage-tower` (query-side
fine-tuning against the built index of the whole KB, which stays valid) and `entity-tower` (entity-side
fine-tuning against the frozen passage tower, with the whole KB's hard negatives; the index must be rebuilt
after it), then `reader` on its candidates. The corpora are NIF files; the reader's dev scores are GERBIL's A2KB InKB
scores (`gerbil.experiment.linker_scores`), what `python -m gerbil.run` prints for the checkpoint on the evaluation KB.
"""
from __future__ import annotations

import argparse
import dataclasses
import gc
import logging
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np
import torch

from annotator.model.checkpoint import (MENTION_TABLE, has_module, keep_mention_table, load_checkpoint_tokenizer,
                                        load_config, load_reader, load_retriever, new_reader, new_retriever)
from annotator.model.config import LinkerConfig
from annotator.model.encoders import MINILM, load_tokenizer, resolve_encoder
from annotator.entity_index import EntityIndex, index_identity
from annotator.entity_index import cached_index_dir, entity_tower_id
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import InputBuilder
from annotator.pipeline.mention_table import MentionTable
from annotator.training.data import TitleLookup, build_documents, load_kb
from annotator.training.description_passages import description_documents
from annotator.training.entity_tower_trainer import EntityTowerTrainer, EntityTowerTrainingConfig
from annotator.training.loop import LAST, TRAINING_CONFIG_FILE, TrainingConfig, seed_everything
from annotator.training.passage_tower_trainer import PassageTowerTrainer, PassageTowerTrainingConfig, split_towers
from annotator.training.reader_trainer import ReaderTrainer, ReaderTrainingConfig
from annotator.training.retriever_trainer import RetrieverTrainer, RetrieverTrainingConfig
from annotator.cli.corpora import corpus_documents, fold_argument, read_corpus, read_dataset
from annotator.cli.mention_table import training_links
from gerbil.experiment import linker_scores

logger = logging.getLogger("annotator.cli.train")

# CLI flag -> training config field, for the flags that only override a default.
_OVERRIDES = {"epochs": "epochs", "batch_size": "batch_size", "grad_accumulation": "grad_accumulation", "lr": "lr",
              "max_entity_len": "max_entity_len", "negatives": "negatives", "hard_kb_size": "hard_kb_size",
              "candidates": "candidates", "candidate_kb_size": "candidate_kb_size", "max_passages": "max_passages",
              "max_steps": "max_steps", "dev_docs": "dev_docs", "eval_kb_size": "eval_kb_size",
              "threads": "threads", "seed": "seed", "save_steps": "save_steps",
              "description_dropout": "description_dropout", "eval_top_k": "eval_top_k", "hard_share": "hard_share",
              "eval_competitors": "eval_competitors", "cpu_precision": "cpu_precision",
              "both_towers": "both_towers", "kb_passages": "kb_passages", "title_only_dropout": "title_only_dropout"}


def parse_args(argv: Sequence[str] | None = None, *, prog: str = "python -m annotator.cli.train") -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("module", choices=("retriever", "passage-tower", "entity-tower", "reader"))
    parser.add_argument("--train", type=Path, required=True, help="training corpus (NIF Turtle)")
    parser.add_argument("--leave-out-fold", type=fold_argument, metavar="K/N",
                        help="train without the K-th of N runs of consecutive documents of the corpus (a model "
                             "that later reads them as new text: the learned decision's cross-fitting)")
    parser.add_argument("--dev", type=Path, required=True, help="dev corpus (NIF Turtle), evaluated each epoch")
    parser.add_argument("--kb", type=Path, required=True, help="entity KB (JSON lines, optionally gzipped)")
    parser.add_argument("--out", type=Path, required=True, help="checkpoint folder (best dev) with last/ for resuming")
    parser.add_argument("--retriever", type=Path,
                        help="passage-tower, entity-tower and reader: the trained retriever's checkpoint folder")
    parser.add_argument("--init-reader", type=Path,
                        help="reader only: start from this checkpoint's reader (fine-tuning) instead of the base "
                             "encoder")
    parser.add_argument("--index-dir", type=Path,
                        help="the KB's entity index built with that retriever; passage-tower and entity-tower: "
                             "default the cache's; "
                             "reader: when given, candidates come from the whole KB")
    parser.add_argument("--encoder", default=MINILM, help="retriever only: base encoder name or folder")
    parser.add_argument("--shared-towers", action="store_true",
                        help="retriever only: one encoder for passages and entities (halves the checkpoint)")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/last")
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--batch-size", type=int, help="passages per micro-batch")
    parser.add_argument("--grad-accumulation", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--max-entity-len", type=int)
    parser.add_argument("--negatives", type=int, help="retriever: shared negatives per micro-batch")
    parser.add_argument("--hard-kb-size", type=int, help="retriever: random entities in the hard-negative index")
    parser.add_argument("--hard-share", type=float, help="retriever, entity-tower: share of hard negatives")
    parser.add_argument("--eval-competitors", type=int,
                        help="entity-tower: top entities of each dev passage under the index added to the dev index")
    parser.add_argument("--both-towers", action="store_true", default=None,
                        help="entity-tower: train the passage tower too (the index's competitors mined once)")
    parser.add_argument("--candidates", type=int, help="reader: candidates per passage")
    parser.add_argument("--candidate-kb-size", type=int, help="reader: random entities in the candidate index")
    parser.add_argument("--max-passages", type=int, help="train on a random subset of passages")
    parser.add_argument("--kb-passages", type=int,
                        help="add this many passages with a gold cut from random KB descriptions, their mentions "
                             "found without labels (default 0: none); 1,300-2,100 make 10-15%% of a mix with "
                             "AIDA train")
    parser.add_argument("--title-only-dropout", type=float,
                        help="reader: probability of showing any described candidate, gold or not, title-only "
                             "(default 0)")
    parser.add_argument("--max-steps", type=int, help="stop after this many optimiser steps")
    parser.add_argument("--dev-docs", type=int, help="evaluate on the first N dev documents")
    parser.add_argument("--eval-kb-size", type=int, help="random entities added to the dev golds for evaluation")
    parser.add_argument("--eval-top-k", type=int, help="reader: candidates per passage in the dev evaluation")
    parser.add_argument("--description-dropout", type=float, help="override the computed gold dropout")
    parser.add_argument("--save-steps", type=int, help="also save OUT/last every N optimiser steps")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--cpu-precision", choices=("auto", "bf16", "fp32"),
                        help="CPU forward passes: bf16 autocast, fp32, or auto = bf16 where the CPU multiplies bf16 "
                             "(AVX-512 bf16 or AMX)")
    parser.add_argument("--seed", type=int)
    args = parser.parse_args(argv)
    if args.module != "retriever" and args.retriever is None:
        parser.error(f"{args.module} needs --retriever DIR (a trained retriever checkpoint)")
    for flag in ("init_reader", "title_only_dropout"):
        if getattr(args, flag) is not None and args.module != "reader":
            parser.error(f"--{flag.replace('_', '-')} applies to the reader only")
    return args


def training_config(args: argparse.Namespace) -> TrainingConfig:
    kind = {"retriever": RetrieverTrainingConfig, "passage-tower": PassageTowerTrainingConfig,
            "entity-tower": EntityTowerTrainingConfig, "reader": ReaderTrainingConfig}[args.module]
    known = {f.name for f in dataclasses.fields(kind)}
    return kind(**{field: getattr(args, flag) for flag, field in _OVERRIDES.items()
                   if field in known and getattr(args, flag) is not None})


def kb_vectors(index_dir: Path, retriever: DualEncoder, kb_path: Path, config: LinkerConfig) -> torch.Tensor:
    """The fp32 entity vectors of a built index, checked to come from this KB and this retriever's entity tower."""
    identity = index_identity(kb_path=kb_path, checkpoint_id=entity_tower_id(retriever), config=config)
    embeddings = EntityIndex.load(index_dir, identity=identity, use_gpu=False).embeddings
    return torch.from_numpy(np.asarray(embeddings, dtype=np.float32))


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m annotator.cli.train") -> int:
    """Trains the stage the command line names; `prog` names the command in help (`entqa train` runs this)."""
    args = parse_args(argv, prog=prog)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = training_config(args)
    torch.set_num_threads(config.threads)
    seed_everything(config.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    args.out.mkdir(parents=True, exist_ok=True)
    config.to_file(args.out / f"{args.module}_{TRAINING_CONFIG_FILE}", argv=sys.argv if argv is None else list(argv))
    last = args.out / LAST
    resuming = args.resume and (last / "config.json").is_file()

    reader = None
    if args.module == "retriever":
        linker_config = load_config(last) if resuming else LinkerConfig.paper().replace(
            encoder=args.encoder, max_entity_len=config.max_entity_len, shared_towers=args.shared_towers)
        tokenizer = load_tokenizer(resolve_encoder(linker_config.encoder))
        retriever = load_retriever(last, linker_config) if resuming else new_retriever(linker_config)
    elif args.module in ("passage-tower", "entity-tower"):
        source = last if resuming else args.retriever
        # entity inputs stay as the index was built: max_entity_len is not overridden
        source_config = load_config(source)
        retriever, linker_config = split_towers(load_retriever(source, source_config), source_config)
        tokenizer = load_checkpoint_tokenizer(source)
        reader = load_reader(source) if has_module(source, "reader") else None
        # The index is the one built with --retriever's entity tower, which a resumed entity-tower run has changed.
        reloaded = resuming and args.module == "entity-tower"
        indexed = load_retriever(args.retriever, source_config) if reloaded else retriever
        index_dir = args.index_dir or cached_index_dir(kb_path=args.kb, entity_tower_id=entity_tower_id(indexed),
                                                           config=linker_config)
    else:
        linker_config = load_config(args.retriever).replace(max_entity_len=config.max_entity_len)
        tokenizer = load_checkpoint_tokenizer(args.retriever)
        retriever = load_retriever(args.retriever, linker_config).to(device)
        source = last if resuming else args.init_reader
        reader = load_reader(source) if source else new_reader(linker_config)
    builder = InputBuilder(tokenizer, linker_config)

    kb = load_kb(args.kb)
    corpus = read_corpus(args.train, leave_out=args.leave_out_fold)
    if args.module != "retriever" and args.leave_out_fold is not None:
        # the retriever's table counted the left-out fold's links too, and this model is to read that fold as new text
        MentionTable.from_links(training_links(corpus, TitleLookup(kb))).save(args.out / MENTION_TABLE)
    elif args.module != "retriever" and args.retriever is not None:
        keep_mention_table(args.retriever, args.out)
    train = build_documents(corpus, builder, TitleLookup(kb))
    train += description_documents(kb, builder, config.kb_passages, seed=config.seed)
    dev_dataset = read_dataset(args.dev, documents=config.dev_docs)
    dev = build_documents(corpus_documents(dev_dataset.documents), builder, TitleLookup(kb))

    # The KB and corpora are millions of long-lived objects: keep the cyclic GC from rescanning them every step.
    gc.freeze()
    if args.module == "retriever":
        trainer = RetrieverTrainer(retriever.to(device), builder, kb, train, dev, config=config,
                                   linker_config=linker_config, device=device)
    elif args.module in ("passage-tower", "entity-tower"):
        vectors = kb_vectors(index_dir, indexed, args.kb, linker_config)
        stage = PassageTowerTrainer if args.module == "passage-tower" else EntityTowerTrainer
        trainer = stage(retriever.to(device), builder, kb, vectors, train, dev, config=config,
                        linker_config=linker_config, device=device, reader=reader)
    else:
        vectors = kb_vectors(args.index_dir, retriever, args.kb, linker_config) if args.index_dir else None
        trainer = ReaderTrainer(reader.to(device), retriever, builder, kb, train, dev, config=config,
                                linker_config=linker_config, device=device, out=args.out, entity_vectors=vectors,
                                linking_scores=partial(linker_scores, dev_dataset))
    best = trainer.train(out=args.out, resume=resuming)
    logger.info("best dev: %s", best)
    return 0


if __name__ == "__main__":
    sys.exit(main())
