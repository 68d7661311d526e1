"""Exact inner-product search with torch, where faiss's flat index is not the fastest: on a GPU without a faiss
GPU build, and on a CPU that multiplies bf16 in hardware. Both answer faiss's `search` (and `ntotal`)."""
from __future__ import annotations

import numpy as np
import torch


class TorchExactIndex:
    """Exact inner-product search as one fp16 matrix product on a torch device.

    The GPU's flat index where faiss has no GPU build (faiss-cpu beside a CUDA torch; faiss-gpu is a
    135 MB wheel tied to CUDA 12 runtime wheels). Scores keep fp16's ~3 significant digits, as faiss's own
    GPU index with `useFloat16`.
    """

    def __init__(self, embeddings: np.ndarray, device: torch.device, *, query_chunk: int = 256) -> None:
        self.vectors = torch.empty(embeddings.shape, dtype=torch.float16, device=device)
        for start in range(0, len(embeddings), 100_000):  # a memmap is copied a slice at a time
            chunk = np.array(embeddings[start:start + 100_000], dtype=np.float16)  # a writable copy for torch
            self.vectors[start:start + len(chunk)] = torch.from_numpy(chunk)
        self.query_chunk = query_chunk  # bounds the (queries, rows) score matrix

    @property
    def ntotal(self) -> int:
        return int(self.vectors.shape[0])

    @torch.inference_mode()
    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """faiss's `search`: (n, k) float32 scores and int64 rows, best first."""
        scores, rows = [], []
        for start in range(0, len(queries), self.query_chunk):
            chunk = torch.from_numpy(queries[start:start + self.query_chunk]).to(self.vectors)
            top = (chunk @ self.vectors.T).float().topk(k, dim=1)
            scores.append(top.values.cpu())
            rows.append(top.indices.cpu())
        empty = torch.empty(0, k)
        return (torch.cat(scores or [empty]).numpy(),
                torch.cat(rows or [empty.long()]).numpy())


class Bf16ExactIndex:
    """Exact inner-product search on a CPU that multiplies bf16 in hardware (AVX-512 bf16, AMX).

    A bf16 copy of the vectors (half of faiss's fp32 flat index) scores every entity; the best `candidates(k)`
    are rescored in fp32 from the stored vectors and ranked. A bound on what bf16 rounding can change in a
    score (the query's and the vectors' rounding, the product's) proves for each query that no entity left
    out could enter its top k; a query without that proof is searched in fp32. So the hits are faiss's flat
    search's, in about 40 % of its time on the AVX-512 EPYC (docs/decisions.md#bf16-exact-search).
    """

    def __init__(self, embeddings: np.ndarray, *, chunk: int = 100_000, query_chunk: int = 64) -> None:
        self.embeddings = embeddings  # the stored (rows, dim) vectors: rescoring and the fp32 search read them
        self.vectors = torch.empty(embeddings.shape, dtype=torch.bfloat16)
        self.chunk = chunk
        self.query_chunk = query_chunk  # bounds the (queries, rows) score matrix: 128 MB for 1M rows
        longest = rounding = 0.0
        for start in range(0, len(embeddings), chunk):  # a memmap is copied a slice at a time
            exact = torch.from_numpy(np.array(embeddings[start:start + chunk], dtype=np.float32))
            rounded = exact.bfloat16()
            self.vectors[start:start + len(exact)] = rounded
            longest = max(longest, float(exact.norm(dim=1).max()))
            rounding = max(rounding, float((exact - rounded.float()).norm(dim=1).max()))
        self.longest, self.rounding = longest, rounding  # max ‖e‖ and max ‖e − bf16(e)‖ over the rows

    @property
    def ntotal(self) -> int:
        return int(self.vectors.shape[0])

    @staticmethod
    def candidates(k: int) -> int:
        """Entities rescored per query for a top k (at k=16 and k=100 every AIDA-A query was proven)."""
        return 2 * k + 64

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """faiss's `search`: (n, k) float32 scores and int64 rows, best first."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        parts = [self._search(queries[start:start + self.query_chunk], k)
                 for start in range(0, len(queries), self.query_chunk)] or [self._search(queries, k)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    @torch.inference_mode()
    def _search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        exact = torch.from_numpy(queries)
        rounded = exact.bfloat16()
        top = (rounded @ self.vectors.T).topk(min(self.candidates(k), self.ntotal), dim=1)
        rows = top.indices.numpy()
        candidates = np.asarray(self.embeddings[rows.ravel()], dtype=np.float32)
        scores = np.einsum("qd,qmd->qm", queries, candidates.reshape(*rows.shape, self.embeddings.shape[1]))
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        scores, rows = np.take_along_axis(scores, order, 1), np.take_along_axis(rows, order, 1)
        # |bf16 score − exact score| ≤ ‖q − q̃‖‖e‖ + ‖q̃‖‖e − ẽ‖ + rounding the sum (2^-8 relative) and adding it
        # up in fp32 (dim · 2^-24): every entity left out scores at most the last candidate's bf16 score + that.
        q_norm = rounded.float().norm(dim=1)
        bound = ((exact - rounded.float()).norm(dim=1) * self.longest + q_norm * self.rounding
                 + q_norm * (self.longest + self.rounding) * (2.0 ** -8 + exact.shape[1] * 2.0 ** -24))
        proven = (top.values[:, -1].float() + bound).numpy() < scores[:, -1]
        if top.values.shape[1] < self.ntotal and not proven.all():
            unproven = np.flatnonzero(~proven)
            scores[unproven], rows[unproven] = self.search_fp32(queries[unproven], k)
        return scores.astype(np.float32, copy=False), rows.astype(np.int64, copy=False)

    @torch.inference_mode()
    def search_fp32(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """`search` in fp32 over the stored vectors, a chunk of rows at a time (for queries left unproven)."""
        queries = torch.from_numpy(np.ascontiguousarray(queries, dtype=np.float32))
        best_scores, best_rows = torch.empty(len(queries), 0), torch.empty(len(queries), 0, dtype=torch.long)
        for start in range(0, self.ntotal, self.chunk):
            vectors = torch.from_numpy(np.array(self.embeddings[start:start + self.chunk], dtype=np.float32))
            top = (queries @ vectors.T).topk(min(k, len(vectors)), dim=1)
            best_scores = torch.cat([best_scores, top.values], 1)
            best_rows = torch.cat([best_rows, top.indices + start], 1)
            keep = best_scores.topk(min(k, best_scores.shape[1]), dim=1).indices
            best_scores, best_rows = best_scores.gather(1, keep), best_rows.gather(1, keep)
        return best_scores.numpy(), best_rows.numpy()
