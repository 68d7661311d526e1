"""Search backends over an index folder's vectors: faiss's index types (built by name), exact search with
torch where faiss's flat index is not the fastest, and which of them serves a search, chosen by hardware from a
table. Every backend answers faiss's `search` (and `ntotal`)."""
from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import faiss
import numpy as np
import torch
from tqdm.auto import tqdm

from annotator.entity_index.folder import faiss_path, read_rows, release_pages
from annotator.errors import ConfigError, ModelLoadError
from annotator.runtime.hardware import multiplies_bf16

logger = logging.getLogger(__name__)


def prefer_blas() -> None:
    """Make faiss's exact search one BLAS product for any number of queries.

    Below its threshold faiss scans every vector once per query; a document's ~20 passages search 1M vectors
    about 2.8x faster as one BLAS product (docs/decisions.md#blas-exact-search). The setting is process-wide,
    so it is made where a faiss index is created or opened, not as a side effect of importing this module.
    """
    faiss.cvar.distance_compute_blas_threshold = 1


def _flat(dim: int, rows: int) -> faiss.Index:
    return faiss.IndexFlatIP(dim)


# HNSW's search breadth, set at load (a search setting, not part of the built graph). On the 1M-entity KB
# with AIDA-A passages, 256 kept 98.2 % of the exact top 100 but lost 3.5 points of gold R@100 (title-only
# entities sit in dense regions); 1024 keeps 99.7 % and gold R@100 within 0.3 (docs/decisions.md#hnsw-ef-search).
HNSW_EF_SEARCH = 1024


def _hnsw(dim: int, rows: int) -> faiss.Index:
    index = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 200
    index.hnsw.efSearch = HNSW_EF_SEARCH
    return index


# Its names are annotator.runtime.settings.IndexType, which a setting is parsed against.
INDEX_FACTORIES: dict[str, Callable[[int, int], faiss.Index]] = {"flat": _flat, "hnsw": _hnsw}


def new_faiss_index(index_type: str, dim: int, rows: int) -> faiss.Index:
    """An empty faiss inner-product index of the named type for `rows` vectors of size `dim`.

    Raises:
        ConfigError: the name is not in `INDEX_FACTORIES`.
    """
    check_index_type(index_type)
    prefer_blas()
    return INDEX_FACTORIES[index_type](dim, rows)


def check_index_type(index_type: str) -> None:
    """Raises ConfigError, listing the valid names, when `index_type` is not in `INDEX_FACTORIES`."""
    if index_type not in INDEX_FACTORIES:
        raise ConfigError(f"unknown index type {index_type!r}; valid types: {sorted(INDEX_FACTORIES)}")


def add_all(index: faiss.Index, embeddings: np.ndarray, *, progress: str | None = None) -> None:
    """Add (rows, dim) vectors to a faiss index 100k rows at a time (a memmap is read a slice at a time)."""
    starts = range(0, len(embeddings), 100_000)
    for start in tqdm(starts, desc=progress, unit="100k", disable=progress is None):
        index.add(np.asarray(embeddings[start:start + 100_000], dtype=np.float32))
        release_pages(embeddings)


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
            release_pages(embeddings)
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

    COPY_ROWS = 16_384  # rows of the stored vectors copied at a time while loading

    def __init__(self, embeddings: np.ndarray, *, chunk: int = 100_000, query_chunk: int = 64) -> None:
        self.embeddings = embeddings  # the stored (rows, dim) vectors: rescoring and the fp32 search read them
        self.vectors = torch.empty(embeddings.shape, dtype=torch.bfloat16)
        self.chunk = chunk
        self.query_chunk = query_chunk  # bounds the (queries, rows) score matrix: 128 MB for 1M rows
        longest = rounding = 0.0
        # A memmap is copied a slice at a time; a slice's temporaries are ~16 bytes a row's dimension, so a small
        # one keeps them near 100 MB at a 1M-entity KB's load (100,000 rows held 0.45 GB more at the peak).
        step = min(chunk, self.COPY_ROWS)
        for start in range(0, len(embeddings), step):
            exact = torch.from_numpy(np.array(embeddings[start:start + step], dtype=np.float32))
            rounded = exact.bfloat16()
            self.vectors[start:start + len(exact)] = rounded
            longest = max(longest, float(exact.norm(dim=1).max()))
            rounding = max(rounding, float((exact - rounded.float()).norm(dim=1).max()))
            release_pages(embeddings)  # the copy, not the file's pages, is what stays (see `release_pages`)
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
        candidates = read_rows(self.embeddings, rows.ravel()).astype(np.float32)
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
            release_pages(self.embeddings)
        return best_scores.numpy(), best_rows.numpy()


SearchIndex = faiss.Index | TorchExactIndex | Bf16ExactIndex


def search_hardware(use_gpu: bool) -> str:
    """The key of `EXACT_SEARCH` for this machine: "faiss-gpu" (a faiss GPU build), "cuda" (a GPU, faiss-cpu
    only), "bf16-cpu" (a CPU that multiplies bf16 in hardware) or "cpu"."""
    if use_gpu:
        return "faiss-gpu" if hasattr(faiss, "StandardGpuResources") else "cuda"
    return "bf16-cpu" if multiplies_bf16() else "cpu"


def _exact_faiss(embeddings: np.ndarray) -> faiss.Index:
    index = new_faiss_index("flat", embeddings.shape[1], len(embeddings))
    fill_flat(index, embeddings)
    return index


def fill_flat(index: faiss.IndexFlat, embeddings: np.ndarray) -> None:
    """An empty flat index made to hold `embeddings` (as float32), written into its buffer a slice at a time.

    What `add` does for a flat index (its codes are the float32 vectors), without growing the buffer by
    reallocation: `add_all`'s slices held the old and the new buffer at once, 1.2 GB above the 1.5 GB index at a
    1M-entity KB's load.
    """
    rows, dim = embeddings.shape
    if index.ntotal or index.d != dim:
        raise ValueError(f"fill_flat needs an empty flat index of dimension {dim}")
    if not rows:
        return
    index.codes.resize(rows * dim * 4)
    stored = faiss.rev_swig_ptr(index.get_xb(), rows * dim).reshape(rows, dim)
    for start in range(0, rows, 100_000):  # a memmap is copied a slice at a time
        stored[start:start + 100_000] = embeddings[start:start + 100_000]
        release_pages(embeddings)
    index.ntotal = rows


# The exact ("flat") search per `search_hardware`: faiss's flat index, or torch where that is faster.
EXACT_SEARCH: dict[str, Callable[[np.ndarray], SearchIndex]] = {
    "faiss-gpu": _exact_faiss,  # moved to the GPUs by `on_hardware`
    "cuda": lambda embeddings: TorchExactIndex(embeddings, torch.device("cuda")),
    "bf16-cpu": Bf16ExactIndex,
    "cpu": _exact_faiss,
}


def open_search_index(directory: Path, embeddings: np.ndarray, index_type: str, hardware: str) -> SearchIndex:
    """The search index of `index_type` over a folder's vectors: exact ones are made from `embeddings` by
    `EXACT_SEARCH[hardware]`, approximate ones are read from the folder.

    Raises:
        ConfigError: `index_type` is not in `INDEX_FACTORIES`.
        ModelLoadError: the folder lacks the faiss index of `index_type`.
    """
    check_index_type(index_type)  # an unknown name is a ConfigError, not a missing file
    prefer_blas()
    if index_type == "flat":
        return EXACT_SEARCH[hardware](embeddings)
    if not faiss_path(directory, index_type).is_file():
        raise ModelLoadError(f"{directory} holds no {index_type} index; add it with python -m annotator.entity_index "
                             f"--model DIR --kb PATH --out {directory} --index-type {index_type}")
    index = faiss.read_index(str(faiss_path(directory, index_type)))
    if isinstance(index, faiss.IndexHNSW):
        index.hnsw.efSearch = HNSW_EF_SEARCH
    return index


def on_hardware(index: SearchIndex, hardware: str) -> SearchIndex:
    """A faiss index copied to every GPU where faiss has a GPU build; any other index as it is."""
    if hardware != "faiss-gpu":
        return index
    try:
        options = faiss.GpuMultipleClonerOptions()
        options.useFloat16 = True  # halves GPU memory; inner products keep ~3 significant digits
        return faiss.index_cpu_to_all_gpus(index, co=options)
    except (AttributeError, RuntimeError) as exc:
        logger.warning("faiss index stays on the CPU (%s)", exc)
        return index
