"""The reader: a cross-encoder with span (start/end) and rerank heads."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from transformers import PreTrainedModel

from annotator.quantization import precision
from annotator.tokenization import Batch


@dataclass(frozen=True)
class ReaderLogits:
    """Raw scores for a batch of (passage, candidate) pairs."""

    start: torch.Tensor  # (pairs, seq_len): w_start · H_i
    end: torch.Tensor  # (pairs, seq_len): w_end · H_i
    rerank: torch.Tensor  # (pairs,): w_rerank · H_[CLS]


class Reader(nn.Module):
    """H = enc([CLS] passage ⊕ topic [SEP] title ⊕ description [SEP]); linear heads on H."""

    def __init__(self, encoder: PreTrainedModel) -> None:
        super().__init__()
        self.encoder = encoder
        hidden = int(encoder.config.hidden_size)
        self.span_head = nn.Linear(hidden, 2)
        self.rerank_head = nn.Linear(hidden, 1)

    @property
    def precision(self) -> str:
        """How it computes: "int8" (a dynamically quantized copy) or its float dtype."""
        return precision(self)

    def forward(self, batch: Batch) -> ReaderLogits:
        hidden = self.encoder(**batch.as_kwargs()).last_hidden_state  # (pairs, seq_len, d)
        start, end = self.span_head(hidden).unbind(-1)
        return ReaderLogits(start, end, self.rerank_head(hidden[:, 0]).squeeze(-1))
