"""Query-side fine-tuning: the passage tower learns against the frozen vectors of a whole KB index.

The retriever trainer contrasts each gold with a few dozen sampled negatives; a model trained that way
ranks gold entities well among thousands but not among a million (dev R@100 96.9 on a 21k KB, 73.1 on
the 1M KB). Here the entity tower and its built index stay fixed, so every entity of the KB can sit in
the denominator of the multi-label NCE (eq. 1 with N(E, p) = all non-gold entities): the hardest
negatives of the full KB are always present, and nothing needs re-encoding — the index stays valid.
Described golds are shown title-only as often as the other stages do (description dropout): their
title-only vectors are encoded once with the frozen entity tower and replace the index's in a step.
"""
from __future__ import annotations

import copy
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from annotator.model.checkpoint import save_checkpoint
from annotator.model.config import LinkerConfig
from annotator.model.reader import Reader
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import InputBuilder
from annotator.training.data import (KnowledgeBase, TrainingDocument, TrainingPassage, description_dropout,
                                     gold_title_only_share, passages_with_golds)
from annotator.training.evaluation import evaluate_retriever
from annotator.training.loop import LoopHooks, TrainingConfig, encode, run_training, shuffled_batches
from annotator.training.losses import multilabel_nce_loss

logger = logging.getLogger(__name__)


@dataclass
class PassageTowerTrainingConfig(TrainingConfig):
    """Query-side settings on top of `TrainingConfig` (lr: 3e-5 measured on AIDA, see docs/history/RESULTS-notebook.md).

    Attributes:
        description_dropout: probability of showing a described gold title-only (None: chosen so that the
            title-only share of golds matches the KB's; see `data.description_dropout`).
        score_scale: multiplies the retriever's inner product in the loss (a temperature for unit vectors).
    """

    lr: float = 3e-5
    description_dropout: float | None = None
    score_scale: float = 20.0


def split_towers(retriever: DualEncoder, config: LinkerConfig) -> tuple[DualEncoder, LinkerConfig]:
    """A retriever (and its config) whose passage tower can be trained while the entity tower stays as it is.

    A shared-tower model gets a copy of its encoder as passage tower; the word embeddings stay shared
    (frozen), so the checkpoint grows by the transformer layers only. Separate towers are kept as they are.
    """
    if retriever.entity_encoder is not None:
        return retriever, config
    split = DualEncoder(copy.deepcopy(retriever.passage_encoder), retriever.passage_encoder,
                        normalize=retriever.normalize, shared_embeddings=True)
    return split, config.replace(shared_towers=False, shared_embeddings=True)


class PassageTowerTrainer:
    """Owns the data, the frozen entity vectors and the hooks of a query-side run (see `run_training`)."""

    def __init__(self, retriever: DualEncoder, builder: InputBuilder, kb: KnowledgeBase,
                 entity_vectors: torch.Tensor, train: Sequence[TrainingDocument], dev: Sequence[TrainingDocument], *,
                 config: PassageTowerTrainingConfig, linker_config: LinkerConfig, device: torch.device,
                 reader: Reader | None = None) -> None:
        """
        Args:
            retriever: a retriever with separate towers (see `split_towers`); its entity tower is frozen here.
            linker_config: the config that loads `retriever` (saved with it).
            entity_vectors: (KB rows, d) vectors of the index built with that entity tower, row = KB row.
            reader: stored unchanged beside the retriever when given, so the output is a complete linker.
        """
        if retriever.entity_encoder is None:
            raise ValueError("query-side training needs separate towers: pass split_towers(retriever, config)")
        if len(entity_vectors) != len(kb):
            raise ValueError(f"{len(entity_vectors)} entity vectors for a KB of {len(kb)} entities")
        retriever.entity_tower.requires_grad_(False)  # and the word embeddings the passage tower shares
        self.retriever, self.builder, self.kb, self.dev, self.reader = retriever, builder, kb, dev, reader
        self.config, self.linker_config, self.device = config, linker_config, device
        self.entities = entity_vectors.to(device)  # (rows, d)
        self.passages = passages_with_golds(train, limit=config.max_passages, seed=config.seed)
        gold_rows = [g for p in self.passages for g in p.gold_rows]
        gold_share, kb_share = gold_title_only_share(kb, self.passages), kb.title_only_share()
        # The KB's entities are as they are: only golds can be shown title-only (p_negative is not used).
        p_gold = description_dropout(gold_share, kb_share)[0]
        self.p_gold = p_gold if config.description_dropout is None else config.description_dropout
        self.title_only_row = {row: i for i, row in enumerate(sorted({g for g in gold_rows if kb.texts[g]}))}
        always = any(g in p.title_only_rows for p in self.passages for g in p.gold_rows)
        self.title_only_vectors = (self._title_only_vectors(list(self.title_only_row)) if self.p_gold > 0 or always
                                   else None)
        self.rng = random.Random(config.seed)
        logger.info("%d training passages against all %d entities; title-only share: golds %.3f, KB %.3f -> "
                    "description dropout p_gold=%.3f", len(self.passages), len(kb), gold_share, kb_share, self.p_gold)

    def _title_only_vectors(self, rows: Sequence[int]) -> torch.Tensor:
        """(len(rows), d) vectors of these KB entities without their description, from the frozen entity tower."""
        self.retriever.eval()
        inputs = self.builder.entity_inputs([self.kb.titles[r] for r in rows], [""] * len(rows))
        return encode(self.retriever.embed_entities, self.builder, inputs, batch_size=self.config.encode_batch_size,
                      device=self.device, desc="golds title-only").to(self.device)

    # -- hooks ---------------------------------------------------------------------------------
    def batches(self, epoch: int) -> list[Sequence[int]]:
        return shuffled_batches(range(len(self.passages)), self.config.batch_size, seed=self.config.seed + epoch)

    def loss(self, indices: Sequence[int]) -> torch.Tensor:
        passages = [self.passages[i] for i in indices]
        gold_mask = torch.zeros(len(passages), len(self.kb), dtype=torch.bool)
        excluded = torch.zeros(len(passages), len(self.kb), dtype=torch.bool)
        for i, passage in enumerate(passages):
            gold_mask[i, sorted(passage.gold_rows)] = True
            excluded[i, sorted(passage.unlabelled_rows)] = True
        vectors = self.retriever.embed_passages(self.builder.pad([p.input_ids for p in passages]).to(self.device))
        return multilabel_nce_loss(vectors, self.entities, gold_mask.to(self.device),
                                   scale=self.config.score_scale, replaced=self.shown_title_only(passages),
                                   excluded=excluded.to(self.device))

    def shown_title_only(self, passages: Sequence[TrainingPassage]) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The batch's described golds drawn to be shown title-only, and those whose description is a batch
        passage, as (KB rows, their title-only vectors)."""
        if self.title_only_vectors is None:
            return None
        golds = sorted({g for p in passages for g in p.gold_rows if g in self.title_only_row})
        always = {r for p in passages for r in p.title_only_rows}
        dropped = [g for g in golds if g in always or self.rng.random() < self.p_gold]
        if not dropped:
            return None
        rows = torch.as_tensor(dropped, device=self.device)
        return rows, self.title_only_vectors[[self.title_only_row[g] for g in dropped]]

    def evaluate(self, epoch: int) -> dict[str, float]:
        """Passage- and document-level R@1/10/100 of the dev passages against the whole KB (exact search)."""
        metrics = evaluate_retriever(self.retriever, self.builder, self.dev, self.kb, range(len(self.kb)),
                                     batch_size=self.config.encode_batch_size, device=self.device,
                                     entity_vectors=self.entities)
        return {**metrics, "score": metrics["passage_R@100"] + metrics["passage_R@10"]}

    def save(self, directory: Path, dtype: torch.dtype) -> None:
        save_checkpoint(directory, config=self.linker_config, tokenizer=self.builder.tokenizer,
                        retriever=self.retriever, reader=self.reader, dtype=dtype)

    def train(self, *, out: Path, resume: bool) -> dict[str, float]:
        hooks = LoopHooks(self.batches, self.loss, lambda epoch: None, self.evaluate, self.save)
        return run_training(self.retriever, hooks, self.config, out=out, device=self.device, resume=resume)
