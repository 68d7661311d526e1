"""Training the reader on candidates from the trained retriever (all golds included), objective of eq. 2."""
from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from annotator.model.checkpoint import keep_mention_table, save_checkpoint
from annotator.model.config import LinkerConfig
from annotator.model.reader import Reader
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import InputBuilder, right_padded
from annotator.training.data import (KnowledgeBase, TrainingDocument, TrainingPassage, always_title_only,
                                     description_dropout, gold_title_only_share, passages_with_golds, sample_kb_rows)
from annotator.training.evaluation import LinkingScores, pipeline_linker, rank_passages
from annotator.training.loop import LoopHooks, TrainingConfig, run_training, shuffled_batches
from annotator.training.losses import reader_loss

logger = logging.getLogger(__name__)

EVAL_KB_FILE = "eval_kb.jsonl.gz"
EVAL_CHECKPOINT = "dev_eval"


@dataclass
class ReaderTrainingConfig(TrainingConfig):
    """Reader settings on top of `TrainingConfig`.

    Attributes:
        batch_size: passages per micro-batch (each expands to `candidates` reader inputs).
        candidates: K, candidates per passage in training (paper: 64): the golds plus the retriever's
            best-ranked other entities.
        candidate_kb_size: random KB entities added to the train and dev golds for the candidate index.
        description_dropout: probability of showing a gold candidate title-only (None: match the
            title-only share of the retrieved non-gold candidates).
        title_only_dropout: probability of showing any described candidate, gold or not, title-only, on top of
            `description_dropout`: as often for golds as for the others, so title-only stays no sign either way,
            and the reader learns to judge the half of the KB that has no description by the passage alone.
        eval_top_k: candidates per passage in the end-to-end dev evaluation (the checkpoint keeps its own).
    """

    batch_size: int = 4
    lr: float = 3e-5
    candidates: int = 8
    candidate_kb_size: int = 20_000
    description_dropout: float | None = None
    title_only_dropout: float = 0.0
    eval_top_k: int = 16

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.title_only_dropout <= 1.0:
            raise ValueError(f"title_only_dropout is a probability in [0, 1], not {self.title_only_dropout}")


@dataclass(frozen=True)
class ReaderExample:
    """A passage with its K candidate rows (golds first)."""

    passage: TrainingPassage
    candidates: tuple[int, ...]


class ReaderTrainer:
    """Owns the candidates, the batches and the hooks of a reader run (see `run_training`)."""

    def __init__(self, reader: Reader, retriever: DualEncoder, builder: InputBuilder, kb: KnowledgeBase,
                 train: Sequence[TrainingDocument], dev: Sequence[TrainingDocument], *,
                 config: ReaderTrainingConfig, linker_config: LinkerConfig, device: torch.device, out: Path,
                 entity_vectors: torch.Tensor | None = None, linking_scores: LinkingScores | None = None) -> None:
        """`entity_vectors`: the (KB rows, d) vectors of the KB's built index; when given, candidates are
        ranked over the whole KB (as at inference) instead of over a sample of `candidate_kb_size` entities.
        `linking_scores`: scores the linker of each epoch's checkpoint on the dev corpus (`dev`'s documents); without
        it no epoch is scored and the latest is kept."""
        self.reader, self.retriever, self.builder, self.kb, self.dev = reader, retriever, builder, kb, dev
        self.linking_scores = linking_scores
        self.config, self.linker_config, self.device, self.out = config, linker_config, device, out
        dev_golds = [g for d in dev for g in d.gold_rows]
        passages = passages_with_golds(train, limit=config.max_passages, seed=config.seed)
        if entity_vectors is None:
            rows = sample_kb_rows(len(kb), [*(g for p in passages for g in p.gold_rows), *dev_golds],
                                  config.candidate_kb_size, seed=config.seed)
            self.examples = self._with_candidates(passages, rows)
        else:
            self.examples = self._with_candidates(passages, range(len(kb)), entity_vectors)
        others = [always_title_only(kb, e.passage, r) for e in self.examples for r in e.candidates
                  if r not in e.passage.gold_rows]
        gold_share = gold_title_only_share(kb, [e.passage for e in self.examples])
        other_share = sum(others) / max(len(others), 1)
        p_gold, p_other = description_dropout(gold_share, other_share)
        if config.description_dropout is not None:
            p_gold = config.description_dropout
        q = config.title_only_dropout
        self.p_gold, self.p_other = 1 - (1 - p_gold) * (1 - q), 1 - (1 - p_other) * (1 - q)
        logger.info("%d training passages, %d candidates each; title-only share: golds %.3f, other candidates "
                    "%.3f -> description dropout p_gold=%.3f p_other=%.3f (title-only dropout %.3f included)",
                    len(self.examples), config.candidates, gold_share, other_share, self.p_gold, self.p_other, q)
        self.eval_kb_path = kb.subset(sample_kb_rows(len(kb), dev_golds, config.eval_kb_size,
                                                     seed=config.seed + 1)).write_jsonl_gz(out / EVAL_KB_FILE)
        self.rng = random.Random(config.seed)

    def _with_candidates(self, passages: Sequence[TrainingPassage], rows: Sequence[int],
                         vectors: torch.Tensor | None = None) -> list[ReaderExample]:
        """Each passage's golds, then the retriever's best other entities among `rows` (with their `vectors`
        when known) but the names it leaves unlabelled, K in all (more if it has > K golds)."""
        self.retriever.eval()
        document = TrainingDocument("", "", (), tuple(passages))
        ranked = rank_passages(self.retriever, self.builder, [document], self.kb, rows,
                               k=self.config.candidates + max(len(p.not_negative_rows) for p in passages),
                               batch_size=self.config.encode_batch_size, device=self.device,
                               entity_vectors=vectors)[0]
        examples = []
        for passage, found in zip(passages, ranked):
            golds = sorted(passage.gold_rows)
            others = [r for r in found if r not in passage.not_negative_rows]
            others = others[: max(self.config.candidates - len(golds), 0)]
            examples.append(ReaderExample(passage, (*golds, *others)))
        return examples

    # -- hooks ---------------------------------------------------------------------------------
    def batches(self, epoch: int) -> list[Sequence[ReaderExample]]:
        return shuffled_batches(self.examples, self.config.batch_size, seed=self.config.seed + epoch)

    def loss(self, examples: Sequence[ReaderExample]) -> torch.Tensor:
        k = self.config.candidates
        # A passage with more than K golds keeps only K of them in this batch: the loss needs a (passages, K) grid.
        grid = [e.candidates[:k] + (e.candidates[0],) * (k - len(e.candidates[:k])) for e in examples]
        entities, widths = [], []
        span_pair, span_start, span_end = [], [], []
        is_gold = torch.zeros(len(examples), k, dtype=torch.bool)
        for i, (example, candidates) in enumerate(zip(examples, grid)):
            golds = example.passage.gold_rows
            titles = [self.kb.titles[r] for r in candidates]
            dropped = [self.rng.random() < (self.p_gold if r in golds else self.p_other) for r in candidates]
            texts = ["" if drop or r in example.passage.title_only_rows else self.kb.texts[r]
                     for r, drop in zip(candidates, dropped)]
            entities.extend(self.builder.entity_inputs(titles, texts))
            for j, row in enumerate(candidates):
                widths.append(len(example.passage.passage.ids))
                pair = i * k + j
                # A padded duplicate of the first candidate is scored like a gold but must not count twice.
                counted = row in golds and row not in candidates[:j]
                is_gold[i, j] = counted
                targets = [(g.start + 1, g.end + 1) for g in example.passage.golds if g.row == row] if counted \
                    else [(0, 0)]
                for s, t in targets:
                    span_pair.append(pair)
                    span_start.append(s)
                    span_end.append(t)
        batch = self.builder.reader_batch([e.passage.input_ids for e in examples],
                                          np.repeat(np.arange(len(examples)), k),
                                          *right_padded(entities, self.builder.pad_id)).to(self.device)
        positions = torch.arange(batch.input_ids.shape[1])
        span_mask = positions.unsqueeze(0) <= torch.as_tensor(widths).unsqueeze(1)  # [CLS] + passage wordpieces
        logits = self.reader(batch)
        return reader_loss(logits.start, logits.end, logits.rerank, span_mask=span_mask.to(self.device),
                           is_gold=is_gold.to(self.device), span_pair=torch.as_tensor(span_pair, device=self.device),
                           span_start=torch.as_tensor(span_start, device=self.device),
                           span_end=torch.as_tensor(span_end, device=self.device))

    def evaluate(self, epoch: int) -> dict[str, float]:
        """End-to-end dev scores of the inference pipeline over the evaluation KB (score = F1; without
        `linking_scores`, the latest epoch wins)."""
        if self.linking_scores is None:
            return {"score": float(epoch)}
        checkpoint = self.out / EVAL_CHECKPOINT
        self.save(checkpoint, torch.float32)
        keep_mention_table(self.out, checkpoint)
        metrics = dict(self.linking_scores(pipeline_linker(checkpoint, self.eval_kb_path,
                                                           top_k=self.config.eval_top_k)))
        return {**metrics, "score": metrics["f1"]}

    def save(self, directory: Path, dtype: torch.dtype) -> None:
        save_checkpoint(directory, config=self.linker_config, tokenizer=self.builder.tokenizer,
                        retriever=self.retriever, reader=self.reader, dtype=dtype)

    def train(self, *, out: Path, resume: bool) -> dict[str, float]:
        hooks = LoopHooks(self.batches, self.loss, lambda epoch: None, self.evaluate, self.save)
        return run_training(self.reader, hooks, self.config, out=out, device=self.device, resume=resume)
