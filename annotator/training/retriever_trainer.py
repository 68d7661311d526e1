"""Training the retriever with multi-label NCE: shared random negatives plus hard negatives mined each epoch."""
from __future__ import annotations

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
                                     gold_title_only_share, passages_with_golds, sample_kb_rows)
from annotator.training.evaluation import evaluate_retriever
from annotator.training.loop import LoopHooks, TrainingConfig, encode, run_training, shuffled_batches, top_k
from annotator.training.losses import multilabel_nce_loss

logger = logging.getLogger(__name__)


@dataclass
class RetrieverTrainingConfig(TrainingConfig):
    """Retriever settings on top of `TrainingConfig`.

    Attributes:
        negatives: negatives shared by the passages of a micro-batch (besides the batch's golds).
        hard_share: share of those mined with the current model (paper: 10 %); the rest uniform over the KB.
        hard_per_passage: highest-scoring non-gold entities kept per passage at mining time.
        hard_kb_size: random KB entities added to the train golds for the mining index.
        description_dropout: probability of showing a gold title-only (None: chosen so that the
            title-only shares of golds and negatives match; see `data.description_dropout`).
        score_scale: multiplies the retriever's inner product in the loss (a temperature for unit vectors).
    """

    lr: float = 2e-5
    negatives: int = 64
    hard_share: float = 0.1
    hard_per_passage: int = 8
    hard_kb_size: int = 20_000
    description_dropout: float | None = None
    score_scale: float = 20.0


@dataclass(frozen=True)
class EntityColumns:
    """The entities of one micro-batch: distinct KB rows and the passage × entity gold mask."""

    rows: list[int]
    gold_mask: torch.Tensor  # (passages, entities) bool
    title_only: list[bool]  # whether each entity is shown without its description
    excluded: torch.Tensor  # (passages, entities) bool: no negative of the passage (a name it leaves unlabelled)


class RetrieverTrainer:
    """Owns the data, the negatives and the hooks of a retriever run (see `run_training`)."""

    def __init__(self, retriever: DualEncoder, builder: InputBuilder, kb: KnowledgeBase,
                 train: Sequence[TrainingDocument], dev: Sequence[TrainingDocument], *,
                 config: RetrieverTrainingConfig, linker_config: LinkerConfig, device: torch.device,
                 reader: Reader | None = None) -> None:
        """`reader`, when given, is stored unchanged beside the retriever, so the output is a complete linker."""
        self.retriever, self.builder, self.kb, self.dev, self.reader = retriever, builder, kb, dev, reader
        self.config, self.linker_config, self.device = config, linker_config, device
        self.passages = passages_with_golds(train, limit=config.max_passages, seed=config.seed)
        gold_share, negative_share = gold_title_only_share(kb, self.passages), kb.title_only_share()
        p_gold, self.p_negative = description_dropout(gold_share, negative_share)
        self.p_gold = p_gold if config.description_dropout is None else config.description_dropout
        logger.info("%d training passages; title-only share: golds %.3f, KB %.3f -> description dropout "
                    "p_gold=%.3f p_negative=%.3f", len(self.passages), gold_share, negative_share, self.p_gold,
                    self.p_negative)
        self.eval_rows = sample_kb_rows(len(kb), (g for d in dev for g in d.gold_rows), config.eval_kb_size,
                                        seed=config.seed + 1)
        self.hard: list[list[int]] = [[] for _ in self.passages]
        self.rng = random.Random(config.seed)

    # -- hooks ---------------------------------------------------------------------------------
    def batches(self, epoch: int) -> list[Sequence[int]]:
        return shuffled_batches(range(len(self.passages)), self.config.batch_size, seed=self.config.seed + epoch)

    def mine_hard_negatives(self, epoch: int) -> None:
        """Ranks the mining index for every training passage with the current model."""
        if self.config.hard_share <= 0:
            return
        self.retriever.eval()
        rows = sample_kb_rows(len(self.kb), (g for p in self.passages for g in p.gold_rows),
                              self.config.hard_kb_size, seed=self.config.seed)
        entities = encode(self.retriever.embed_entities, self.builder,
                          self.builder.entity_inputs([self.kb.titles[r] for r in rows], [self.kb.texts[r] for r in rows]),
                          batch_size=self.config.encode_batch_size, device=self.device, desc="mining: entities")
        passages = encode(self.retriever.embed_passages, self.builder, [p.input_ids for p in self.passages],
                          batch_size=self.config.encode_batch_size, device=self.device, desc="mining: passages")
        self.keep_hard_negatives(passages, entities, rows)
        logger.info("epoch %d: mined hard negatives over %d entities", epoch + 1, len(rows))

    def keep_hard_negatives(self, passages: torch.Tensor, entities: torch.Tensor,
                            rows: Sequence[int] | None = None) -> None:
        """Keeps each training passage's highest-ranked non-gold entities as its hard negatives.

        Args:
            passages: (training passages, d) vectors, in `self.passages` order.
            entities: (n, d) vectors of the KB rows `rows` (default: every row, in order).
        """
        most_golds = max(len(p.not_negative_rows) for p in self.passages)
        ranked = top_k(passages, entities, self.config.hard_per_passage + most_golds)
        if rows is not None:
            ranked = torch.as_tensor(rows)[ranked]
        self.hard = [[r for r in found if r not in p.not_negative_rows][: self.config.hard_per_passage]
                     for p, found in zip(self.passages, ranked.tolist())]

    def columns(self, passages: Sequence[TrainingPassage], hard_pool: Sequence[int]) -> EntityColumns:
        """The batch's golds plus shared negatives (hard from `hard_pool`, the rest uniform), deduplicated."""
        n_hard = min(round(self.config.hard_share * self.config.negatives), len(hard_pool))
        golds = sorted({g for p in passages for g in p.gold_rows})
        negatives = self.rng.sample(sorted(set(hard_pool)), min(n_hard, len(set(hard_pool))))
        negatives += [self.rng.randrange(len(self.kb)) for _ in range(self.config.negatives - len(negatives))]
        rows = list(dict.fromkeys([*golds, *negatives]))  # one column per entity: no gold hides among negatives
        gold_set = set(golds)
        column = {r: i for i, r in enumerate(rows)}
        mask = torch.zeros(len(passages), len(rows), dtype=torch.bool)
        excluded = torch.zeros(len(passages), len(rows), dtype=torch.bool)
        for i, passage in enumerate(passages):
            mask[i, [column[r] for r in passage.gold_rows]] = True
            excluded[i, [column[r] for r in passage.unlabelled_rows if r in column]] = True
        # A description passage's own entity is shown title-only: its description is the passage.
        always = {r for p in passages for r in p.title_only_rows}
        title_only = [r in always or self.rng.random() < (self.p_gold if r in gold_set else self.p_negative)
                      for r in rows]
        return EntityColumns(rows, mask, title_only, excluded)

    def loss(self, indices: Sequence[int]) -> torch.Tensor:
        passages = [self.passages[i] for i in indices]
        columns = self.columns(passages, [r for i in indices for r in self.hard[i]])
        texts = ["" if drop else self.kb.texts[r] for r, drop in zip(columns.rows, columns.title_only)]
        entity_batch = self.builder.pad(self.builder.entity_inputs([self.kb.titles[r] for r in columns.rows], texts))
        entity_vectors = self.retriever.embed_entities(entity_batch.to(self.device))
        return multilabel_nce_loss(self.passage_vectors(indices), entity_vectors, columns.gold_mask.to(self.device),
                                   scale=self.config.score_scale, excluded=columns.excluded.to(self.device))

    def passage_vectors(self, indices: Sequence[int]) -> torch.Tensor:
        """(len(indices), d) vectors of training passages, through the passage tower being trained."""
        batch = self.builder.pad([self.passages[i].input_ids for i in indices])
        return self.retriever.embed_passages(batch.to(self.device))

    def evaluate(self, epoch: int) -> dict[str, float]:
        metrics = evaluate_retriever(self.retriever, self.builder, self.dev, self.kb, self.eval_rows,
                                     batch_size=self.config.encode_batch_size, device=self.device)
        return {**metrics, "score": metrics["passage_R@100"] + metrics["passage_R@10"]}

    def save(self, directory: Path, dtype: torch.dtype) -> None:
        save_checkpoint(directory, config=self.linker_config, tokenizer=self.builder.tokenizer,
                        retriever=self.retriever, reader=self.reader, dtype=dtype)

    def train(self, *, out: Path, resume: bool) -> dict[str, float]:
        hooks = LoopHooks(self.batches, self.loss, self.mine_hard_negatives, self.evaluate, self.save)
        return run_training(self.retriever, hooks, self.config, out=out, device=self.device, resume=resume)
