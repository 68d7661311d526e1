"""A tiny random BERT reader and made-up (passage, entity) pairs for it, for tests of the reader's passes."""
from __future__ import annotations

import torch
from transformers import BertConfig

from annotator.model.encoders import encoder_from_config
from annotator.model.reader import Reader
from annotator.model.tokenization import Batch

# The leading positions the tests shorten the reader's last layer to (`span_positions_only`).
POSITIONS = 5
VOCAB_SIZE = 50


def tiny_reader(attention: str) -> Reader:
    """A reader of random 2-layer, 32-wide BERT weights (always the same) in eval mode, with `attention` ("eager"
    or "sdpa") as its attention implementation."""
    torch.manual_seed(3)
    config = BertConfig(vocab_size=VOCAB_SIZE, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    reader = Reader(encoder_from_config(config)).eval()
    reader.encoder.set_attn_implementation(attention)
    return reader


def random_pairs(lengths: list[int]) -> Batch:
    """A padded batch of one random pair per length (always the same), its segment 1 from the fourth position."""
    generator = torch.Generator().manual_seed(4)
    width = max(lengths)
    mask = (torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]).long()
    ids = torch.randint(1, VOCAB_SIZE, (len(lengths), width), generator=generator) * mask
    return Batch(ids, mask, (torch.arange(width)[None, :] >= 3).long() * mask)
