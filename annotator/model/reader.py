"""The reader: a cross-encoder with span (start/end) and rerank heads."""
from __future__ import annotations

import copy
import logging
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from transformers import PreTrainedModel
from transformers.models.bert.modeling_bert import BertLayer

from annotator.model.attention import attention_kernels
from annotator.runtime.quantization import precision
from annotator.model.tokenization import Batch

logger = logging.getLogger(__name__)


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
        with attention_kernels():
            hidden = self.encoder(**batch.as_kwargs()).last_hidden_state  # (pairs, seq_len, d)
        start, end = self.span_head(hidden).unbind(-1)
        return ReaderLogits(start, end, self.rerank_head(hidden[:, 0]).squeeze(-1))


def span_positions_only(reader: Reader, positions: int) -> Reader:
    """A copy of `reader` for inference whose logits cover only the first `positions` positions.

    The linker reads spans at [CLS] and passage positions only, and rerank at [CLS]; all of them lie in the
    first `passage_len - 1` positions of every pair. In the encoder's last layer the other positions
    (topic, title, description) serve only as keys and values, so their queries, attention outputs and
    feed-forward blocks are skipped: about 60 % of that layer for a pair of ~85 wordpieces (docs/decisions.md#reader-last-layer). The logits it returns equal the full reader's at those positions, which is checked once on a
    made-up pair: where they would not (MPNet's relative attention, a transformers version whose layers
    return something else), `reader` itself is returned.
    """
    layers = reader.encoder.encoder.layer
    if not isinstance(layers[-1], BertLayer):
        return reader
    leading = copy.deepcopy(reader)
    leading.encoder.encoder.layer[-1] = _LeadingPositionsLayer(layers[-1], positions)
    ids = torch.arange(1, positions + 9).remainder(int(reader.encoder.config.vocab_size)).unsqueeze(0)
    probe = Batch(ids, torch.ones_like(ids), None)
    with torch.inference_mode():
        whole, part = reader(probe), leading(probe)
    same = part.start.shape == (1, positions) and torch.allclose(part.start, whole.start[:, :positions], atol=1e-4) \
        and torch.allclose(part.rerank, whole.rerank, atol=1e-4)
    if not same:
        logger.warning("the reader's last layer is computed at every position: the shortened layer scored differently")
    return leading if same else reader


class _LeadingPositionsLayer(nn.Module):
    """A BERT layer computed at its first `positions` positions, attending to all of them (inference only)."""

    def __init__(self, layer: BertLayer, positions: int) -> None:
        super().__init__()
        self.layer = layer
        self.positions = positions

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None,
                *args: object, **kwargs: object) -> torch.Tensor:
        attention = self.layer.attention.self
        queries = hidden_states[:, :self.positions]

        def heads(x: torch.Tensor) -> torch.Tensor:  # (pairs, length, d) -> (pairs, heads, length, d / heads)
            return x.view(*x.shape[:2], -1, attention.attention_head_size).transpose(1, 2)

        # the mask the encoder made: additive or boolean, broadcast over queries or one row per query
        if attention_mask is not None and attention_mask.shape[-2] != 1:
            attention_mask = attention_mask[..., :self.positions, :]
        context = F.scaled_dot_product_attention(heads(attention.query(queries)), heads(attention.key(hidden_states)),
                                                 heads(attention.value(hidden_states)), attn_mask=attention_mask)
        attended = self.layer.attention.output(context.transpose(1, 2).flatten(2), queries)
        return self.layer.output(self.layer.intermediate(attended), attended)
