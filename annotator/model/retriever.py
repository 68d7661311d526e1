"""The dual encoder: passage and entity towers whose inner product scores a (passage, entity) pair."""
from __future__ import annotations

import torch
from torch import nn
from transformers import PreTrainedModel

from annotator.model.attention import attention_kernels
from annotator.runtime.quantization import precision
from annotator.model.tokenization import Batch


class DualEncoder(nn.Module):
    """score(p, e) = P · E, with P, E the mean token vectors of two encoders (or one, with `entity_encoder=None`)."""

    def __init__(self, passage_encoder: PreTrainedModel, entity_encoder: PreTrainedModel | None = None,
                 *, normalize: bool = True, shared_embeddings: bool = False) -> None:
        super().__init__()
        self.passage_encoder = passage_encoder
        self.entity_encoder = entity_encoder  # None: the towers share weights
        if entity_encoder is not None and shared_embeddings:
            passage_encoder.set_input_embeddings(entity_encoder.get_input_embeddings())
        self.normalize = normalize

    @property
    def entity_tower(self) -> PreTrainedModel:
        """The encoder of entity vectors (what a KB index depends on)."""
        return self.entity_encoder or self.passage_encoder

    @property
    def dim(self) -> int:
        return int(self.passage_encoder.config.hidden_size)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @property
    def precision(self) -> str:
        """How the towers compute: "int8" (a dynamically quantized copy) or their float dtype."""
        return precision(self)

    def _embed(self, encoder: PreTrainedModel, batch: Batch) -> torch.Tensor:
        with attention_kernels():
            hidden = encoder(**batch.as_kwargs()).last_hidden_state  # (batch, seq_len, d)
        # The mean over tokens, as the sentence encoders were trained (the paper takes the [CLS] vector).
        mask = batch.attention_mask.unsqueeze(-1).to(hidden.dtype)
        vectors = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return nn.functional.normalize(vectors, dim=-1) if self.normalize else vectors  # (batch, d)

    def embed_passages(self, batch: Batch) -> torch.Tensor:
        """(batch, d) passage vectors."""
        return self._embed(self.passage_encoder, batch)

    def embed_entities(self, batch: Batch) -> torch.Tensor:
        """(batch, d) entity vectors."""
        return self._embed(self.entity_tower, batch)
