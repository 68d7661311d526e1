"""A reference linker that calls the reader on one (passage, candidate) pair at a time.

The original EntQA scored each passage's candidates in small per-candidate batches, in full precision;
this reproduces that cost model so that `bench.e2e_http` can measure what the batched pass (and, on the
CPU, int8) gains. Everything else (retrieval, decoding, merging) is the `Linker`'s own.
"""
from __future__ import annotations

import numpy as np

from annotator.model.checkpoint import load_reader
from annotator.pipeline.linker import Linker
from annotator.model.tokenization import Batch


class NaiveLinker(Linker):
    """`Linker` whose reader runs one forward pass per (passage, candidate) pair, with no padding."""

    @classmethod
    def from_linker(cls, linker: Linker) -> NaiveLinker:
        """A naive linker with the checkpoint's reader in the device's full dtype (never int8) and computing
        every position of its last layer (not `span_positions_only`), sharing `linker`'s config, retriever
        and index."""
        dtype = next(linker.retriever.parameters()).dtype
        reader = load_reader(linker.model_dir).to(linker.device, dtype)
        return cls(config=linker.config, runtime=linker.runtime, builder=linker.builder, retriever=linker.retriever,
                   reader=reader, index=linker.index, device=linker.device, model_dir=linker.model_dir,
                   kb_path=linker.kb_path)

    def _score_pairs(self, batch: Batch, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Scores each pair on its own; positions beyond a pair's length are -inf, as in the batched pass."""
        pairs = batch.input_ids.shape[0]
        start, end = np.full((pairs, width), -np.inf), np.full((pairs, width), -np.inf)
        rerank = np.empty(pairs)
        for i in range(pairs):
            pair_start, pair_end, pair_rerank = self._forward(batch.rows([i]), width)
            columns = pair_start.shape[1]
            start[i, :columns], end[i, :columns], rerank[i] = pair_start[0], pair_end[0], pair_rerank[0]
        return start, end, rerank
