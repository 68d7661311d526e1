"""A reference linker that calls the reader on one (passage, candidate) pair at a time.

The original EntQA scored each passage's candidates in small per-candidate batches, in full precision;
this reproduces that cost model so that `bench.e2e_http` can measure what the batched pass (and, on the
CPU, int8) gains. Only the reading stage differs: retrieval, decoding and the post-processors are the `Linker`'s own.
"""
from __future__ import annotations

import dataclasses

from annotator.model.checkpoint import load_reader
from annotator.pipeline.linker import Linker
from annotator.pipeline.reading import BatchedReading


def naive_linker(linker: Linker) -> Linker:
    """`linker` (as `Linker.from_pretrained` loads it) reading one pair per forward pass, with no padding, with the
    checkpoint's reader in the device's full dtype (never int8) computing every position of its last layer (not
    `span_positions_only`)."""
    dtype = next(linker.retrieval.retriever.parameters()).dtype
    reader = load_reader(linker.model_dir).to(linker.device, dtype)
    return dataclasses.replace(linker, reading=BatchedReading(builder=linker.builder, reader=reader, index=linker.index,
                                                              device=linker.device, batch_size=1))
