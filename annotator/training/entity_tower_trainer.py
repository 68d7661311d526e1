"""Entity-side fine-tuning: the entity tower learns against a frozen passage tower and the whole KB's index.

The mirror of `passage_tower_trainer`. The retriever trainer's first stage mines its hard negatives from
a few thousand entities, so the entity tower never meets most of the entities that outrank a gold in the
full KB. Here the passage tower stays fixed, so each training passage's strongest non-gold entities in
the built index of the whole KB stay its strongest competitors: they are mined once and re-encoded, with
uniform random negatives, in every step's multi-label NCE (eq. 1). The entity vectors change, so the KB's
index must be rebuilt after this stage (`python -m annotator.entity_index`). With `both_towers` the passage tower
learns too, against the same competitors, mined once when the run (or its resumption) starts.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from annotator.model.config import LinkerConfig
from annotator.model.reader import Reader
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import InputBuilder
from annotator.training.data import KnowledgeBase, TrainingDocument, sample_kb_rows
from annotator.training.loop import encode, top_k
from annotator.training.retriever_trainer import RetrieverTrainer, RetrieverTrainingConfig

logger = logging.getLogger(__name__)


@dataclass
class EntityTowerTrainingConfig(RetrieverTrainingConfig):
    """Entity-side settings on top of `RetrieverTrainingConfig`.

    Attributes:
        hard_share: a higher share than stage 1's 10 %: the mined negatives are the full KB's, the ones
            that cost recall at inference.
        eval_competitors: per dev passage, its highest-ranked entities under the frozen index that join
            the dev golds and `eval_kb_size` random entities in the evaluation index, so that the dev
            recall after each epoch is measured against the entities that compete in the full KB.
        both_towers: train the passage tower too (not the word embeddings): both towers learn against the
            full KB's competitors, which stay those mined from the index at the start.
    """

    negatives: int = 96
    hard_share: float = 0.5
    eval_kb_size: int = 5_000
    eval_competitors: int = 20
    both_towers: bool = False


class EntityTowerTrainer(RetrieverTrainer):
    """A `RetrieverTrainer` whose passage tower (unless `both_towers`) and the word embeddings it shares are
    frozen, with hard negatives mined from the vectors of the whole KB's index."""

    def __init__(self, retriever: DualEncoder, builder: InputBuilder, kb: KnowledgeBase,
                 entity_vectors: torch.Tensor, train: Sequence[TrainingDocument], dev: Sequence[TrainingDocument], *,
                 config: EntityTowerTrainingConfig, linker_config: LinkerConfig, device: torch.device,
                 reader: Reader | None = None) -> None:
        """
        Args:
            retriever: a retriever with separate towers; its passage tower is frozen here unless `both_towers`.
            entity_vectors: (KB rows, d) vectors of the index built with its entity tower, row = KB row.
        """
        if retriever.entity_encoder is None:
            raise ValueError("entity-side training needs separate towers (a passage-tower checkpoint)")
        if len(entity_vectors) != len(kb):
            raise ValueError(f"{len(entity_vectors)} entity vectors for a KB of {len(kb)} entities")
        super().__init__(retriever, builder, kb, train, dev, config=config, linker_config=linker_config,
                         device=device, reader=reader)
        retriever.passage_encoder.requires_grad_(config.both_towers)
        retriever.passage_encoder.get_input_embeddings().requires_grad_(False)  # shared with the entity tower
        self.entities = entity_vectors
        # Once, in eval mode (no dropout): competitors are mined with these (and, unless both_towers, trained against).
        self.frozen_passages = self._encode_passages([p.input_ids for p in self.passages], "train passages")
        dev_passages = self._encode_passages([p.input_ids for d in dev for p in d.passages], "dev passages")
        competitors = top_k(dev_passages, self.entities, config.eval_competitors).flatten().tolist()
        self.eval_rows = sample_kb_rows(len(kb), [*competitors, *(g for d in dev for g in d.gold_rows)],
                                        config.eval_kb_size, seed=config.seed + 1)
        logger.info("evaluation index: %d dev golds and competitors plus %d random entities",
                    len(self.eval_rows) - config.eval_kb_size, config.eval_kb_size)

    def _encode_passages(self, sequences: Sequence[Sequence[int]], desc: str) -> torch.Tensor:
        self.retriever.eval()
        return encode(self.retriever.embed_passages, self.builder, sequences,
                      batch_size=self.config.encode_batch_size, device=self.device, desc=desc).to(self.device)

    def mine_hard_negatives(self, epoch: int) -> None:
        """Ranks the whole KB for every training passage, once, by the index's vectors and the passage tower as
        it is then (with `both_towers`, ranking again would need the KB encoded again)."""
        if self.config.hard_share <= 0 or any(self.hard):
            return
        self.keep_hard_negatives(self.frozen_passages, self.entities)
        logger.info("mined hard negatives over all %d entities", len(self.kb))

    def passage_vectors(self, indices: Sequence[int]) -> torch.Tensor:
        if self.config.both_towers:
            return super().passage_vectors(indices)
        return self.frozen_passages[torch.as_tensor(list(indices))]
