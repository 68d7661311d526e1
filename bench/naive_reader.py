"""A reference linker that calls the reader on one (passage, candidate) pair at a time.

The original EntQA scored each passage's candidates in small per-candidate batches; this reproduces
that cost model so that `bench.e2e_http` can measure what batching all pairs into one pass gains.
Everything else (retrieval, decoding, merging) is the `Linker`'s own, so the mentions are the same.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from annotator.pipeline import Linker


class NaiveLinker(Linker):
    """`Linker` whose reader runs one forward pass per (passage, candidate) pair, with no padding."""

    @classmethod
    def from_linker(cls, linker: Linker) -> NaiveLinker:
        """A naive linker sharing `linker`'s config, models and index (nothing is loaded twice)."""
        return cls(config=linker.config, builder=linker.builder, retriever=linker.retriever, reader=linker.reader,
                   index=linker.index, device=linker.device, model_dir=linker.model_dir, kb_path=linker.kb_path)

    def _score_pairs(self, sequences: Sequence[tuple[list[int], list[int]]],
                     width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Scores each pair on its own; positions beyond a pair's length are -inf, as in the batched pass."""
        start = np.full((len(sequences), width), -np.inf)
        end = np.full((len(sequences), width), -np.inf)
        rerank = np.empty(len(sequences))
        for i, sequence in enumerate(sequences):
            pair_start, pair_end, pair_rerank = self._forward([sequence], width)
            columns = pair_start.shape[1]
            start[i, :columns], end[i, :columns], rerank[i] = pair_start[0], pair_end[0], pair_rerank[0]
        return start, end, rerank
