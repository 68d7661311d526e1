"""Bench: faiss index types of annotator.entity_index, and IVF-PQ (built here only: the product does not serve it),
on synthetic clustered vectors (a stand-in for a large KB) or on a real KB's vectors.

Prints, for exact search and each approximate index type: build time, index size, resident memory
added, query time (batch and one document's passages) and R@100 against exact search; and how far apart
the exact top-100 scores lie (near-ties are what an approximate index reorders). Figures are printed, never
asserted. `flat-bf16` is the linker's exact search on CPUs with bf16 products (`Bf16ExactIndex`): a bf16 copy
in memory over the fp16 vectors an index folder stores (written to a temporary file and memory-mapped).

    python -m bench.index_scaling --rows 6000000 --dim 384 --types ivfpq --nprobe 128 256 --k-factor 32
    python -m bench.index_scaling --vectors INDEX_DIR/embeddings.npy --query-vectors dev_passages.npy

(`--query-vectors` from `python -m bench.dev_recall ... --queries-out dev_passages.npy`.)
"""
from __future__ import annotations

import argparse
import itertools
import math
import os
import resource
import tempfile
import time
from functools import partial
from pathlib import Path

import faiss
import numpy as np
import torch

from annotator.entity_index import INDEX_FACTORIES, new_faiss_index
from annotator.entity_index.search import Bf16ExactIndex, prefer_blas

BF16_EXACT = "flat-bf16"
IVFPQ = "ivfpq"


def ivfpq_index(dim: int, rows: int) -> faiss.Index:
    """An IVF-PQ index for `rows` vectors, with the best product codes re-scored on an fp16 copy of the vectors."""
    # Product codes alone lose ~40 points of R@100 against exact search, so an fp16 copy of the vectors
    # re-scores the best k_factor × k codes. SQ8 re-scoring (half the size) reorders the near-ties around
    # rank 100 and caps R@100 1.5 points below exact (docs/decisions.md#ivfpq-fp16-rescoring).
    # The coarse quantizer stays flat: an HNSW over the centroids sends most vectors of near-orthogonal
    # topic clusters to the wrong list (14 % right on the synthetic 6M stand-in), which capped R@100 at 73.
    # faiss wants ~39 training points per list and 2**bits per PQ code book.
    lists = max(1, min(int(4 * math.sqrt(rows)), rows // 39))
    sub_quantizers = next(m for m in range(max(dim // 8, 1), 0, -1) if dim % m == 0)
    bits = max(1, min(8, int(math.log2(max(rows, 2)))))
    prefer_blas()
    index = faiss.index_factory(dim, f"IVF{lists},PQ{sub_quantizers}x{bits},Refine(SQfp16)",
                                faiss.METRIC_INNER_PRODUCT)
    faiss.extract_index_ivf(index).nprobe = min(lists, 64)
    index.k_factor = 8
    return index


def _rss_mb() -> float:
    # Anonymous memory only: the pages of a memory-mapped file are the OS's evictable cache.
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("RssAnon:"))
    return int(line.split()[1]) / 1024


def clustered_vectors(rows: int, dim: int, *, clusters: int, seed: int, chunk: int = 500_000) -> np.ndarray:
    """Unit vectors around `clusters` random centres (entities of one topic sit close together)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim), dtype=np.float32)
    out = np.empty((rows, dim), dtype=np.float32)
    for start in range(0, rows, chunk):
        n = min(chunk, rows - start)
        block = centres[rng.integers(0, clusters, n)] + 0.6 * rng.standard_normal((n, dim), dtype=np.float32)
        out[start:start + n] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def recall_at(found: np.ndarray, exact: np.ndarray) -> float:
    """Mean share of the exact top-k found by an approximate search."""
    return float(np.mean([len(set(f) & set(e)) / len(e) for f, e in zip(found, exact)]))


def score_profile(vectors: np.ndarray, queries: np.ndarray, k: int) -> str:
    """Mean exact score at ranks 1 and k, and the mean gap between neighbouring ranks around k."""
    scores = faiss.knn(queries, vectors, k + 1, metric=faiss.METRIC_INNER_PRODUCT)[0]
    return (f"exact scores: rank 1 {scores[:, 0].mean():.4f}, rank {k} {scores[:, k - 1].mean():.4f}, "
            f"gap rank {k}-{k + 1} {np.mean(scores[:, k - 1] - scores[:, k]):.2e}")


def search_figures(index: faiss.Index | Bf16ExactIndex | None, vectors: np.ndarray, queries: np.ndarray, k: int,
                   doc_passages: int) -> tuple[np.ndarray, float, float]:
    """Ids found for all queries, ms per query (one batch call) and ms per document (one call of its passages).

    `index=None` is exact search: brute force over the data array itself (no second copy of 6M vectors).
    """
    def search(batch: np.ndarray) -> np.ndarray:
        if index is None:
            return faiss.knn(batch, vectors, k, metric=faiss.METRIC_INNER_PRODUCT)[1]
        return index.search(batch, k)[1]

    t0 = time.perf_counter()
    ids = search(queries)
    per_query = (time.perf_counter() - t0) * 1000 / len(queries)
    documents = range(0, min(len(queries), 10 * doc_passages), doc_passages)
    t0 = time.perf_counter()
    for start in documents:
        search(queries[start:start + doc_passages])
    return ids, per_query, (time.perf_counter() - t0) * 1000 / len(documents)


def faiss_index(index_type: str, vectors: np.ndarray, rng: np.random.Generator) -> faiss.Index:
    new_index = ivfpq_index if index_type == IVFPQ else partial(new_faiss_index, index_type)
    index = new_index(vectors.shape[1], len(vectors))
    if not index.is_trained:
        index.train(vectors[np.sort(rng.choice(len(vectors), min(len(vectors), 256 * 1024), replace=False))])
    for start in range(0, len(vectors), 500_000):
        index.add(vectors[start:start + 500_000])
    return index


def bf16_exact_index(vectors: np.ndarray, folder: Path) -> Bf16ExactIndex:
    """The stored fp16 vectors written as an index folder holds them, then loaded as the linker loads them."""
    stored = np.lib.format.open_memmap(folder / "embeddings.npy", mode="w+", dtype=np.float16, shape=vectors.shape)
    for start in range(0, len(vectors), 500_000):
        stored[start:start + 500_000] = vectors[start:start + 500_000]
    stored.flush()
    del stored
    return Bf16ExactIndex(np.load(folder / "embeddings.npy", mmap_mode="r"))


def print_row(label: str, build_s: float, size_mib: float, added_mib: float, per_query: float, per_doc: float,
              recall: float) -> None:
    print(f"{label:<30}{build_s:>9.1f}{size_mib:>11.0f}{added_mib:>10.0f}{per_query:>10.2f}{per_doc:>9.1f}"
          f"{recall:>8.1f}", flush=True)


def index_mib(index: faiss.Index) -> float:
    """Size of the serialized index (written to a temporary file: serializing in memory would copy it)."""
    with tempfile.NamedTemporaryFile(suffix=".faiss") as handle:
        faiss.write_index(index, handle.name)
        return os.path.getsize(handle.name) / 2**20


def search_settings(index: faiss.Index, index_type: str, build_s: float, added: float, vectors: np.ndarray,
                    queries: np.ndarray, exact_ids: np.ndarray, args: argparse.Namespace) -> None:
    """One row per search setting of a faiss index: its lists probed and re-scored candidates."""
    size = index_mib(index)
    ivf = faiss.try_extract_index_ivf(index)
    refine = faiss.downcast_index(index)
    refine = refine if isinstance(refine, faiss.IndexRefine) else None
    probes = [ivf.nprobe, *[n for n in args.nprobe if n != ivf.nprobe]] if ivf is not None else [None]
    factors = [refine.k_factor, *[f for f in args.k_factor if f != refine.k_factor]] if refine is not None else [None]
    for nprobe, k_factor in itertools.product(probes, factors):
        label = index_type
        if nprobe is not None:
            ivf.nprobe, label = nprobe, f"{label} nprobe={nprobe}"
        if k_factor is not None:
            refine.k_factor, label = k_factor, f"{label} kf={k_factor:g}"
        ids, per_query, per_doc = search_figures(index, vectors, queries, args.k, args.doc_passages)
        print_row(label, build_s, size, added, per_query, per_doc, 100 * recall_at(ids, exact_ids))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--clusters", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--doc-passages", type=int, default=20, help="queries of one document (one faiss call)")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--types", nargs="+", default=[*sorted(set(INDEX_FACTORIES) - {"flat"}), IVFPQ],
                        choices=[*sorted(set(INDEX_FACTORIES) - {"flat"}), IVFPQ, BF16_EXACT],
                        help="approximate types, or the bf16 exact search (brute force always runs)")
    parser.add_argument("--nprobe", type=int, nargs="*", default=[],
                        help="IVF lists probed: extra settings to search with (the factory's setting always runs)")
    parser.add_argument("--k-factor", type=int, nargs="*", default=[],
                        help="re-scored candidates per hit for refined indexes: extra settings to search with")
    parser.add_argument("--threads", type=int, default=faiss.omp_get_max_threads())
    parser.add_argument("--vectors", help="real KB vectors (.npy, e.g. an index folder's embeddings.npy) "
                                          "instead of synthetic ones (--rows, --dim, --clusters are then ignored)")
    parser.add_argument("--query-vectors", help="real queries (.npy); default: noisy copies of KB vectors")
    args = parser.parse_args()
    faiss.omp_set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    prefer_blas()  # brute force timed as the linker's exact search runs it

    t0 = time.perf_counter()
    vectors = np.ascontiguousarray(np.load(args.vectors), dtype=np.float32) if args.vectors \
        else clustered_vectors(args.rows, args.dim, clusters=args.clusters, seed=0)
    args.rows, args.dim = vectors.shape
    rng = np.random.default_rng(1)
    if args.query_vectors:
        queries = np.load(args.query_vectors).astype(np.float32)
        queries = queries[np.sort(rng.choice(len(queries), min(args.queries, len(queries)), replace=False))]
    else:  # noisy copies of KB vectors, as a passage is close to the entities it mentions
        queries = vectors[rng.integers(0, args.rows, args.queries)] + 0.3 * rng.standard_normal(
            (args.queries, args.dim), dtype=np.float32) / np.sqrt(args.dim)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    print(f"data: {args.rows:,} x {args.dim} float32 ({vectors.nbytes / 2**30:.2f} GiB) in "
          f"{time.perf_counter() - t0:.1f} s; {len(queries)} queries; k={args.k}; {args.threads} threads", flush=True)
    print(score_profile(vectors, queries[:100], args.k), flush=True)

    print(f"{'type':<30}{'build s':>9}{'index MiB':>11}{'RSS+ MiB':>10}{'ms/query':>10}{'ms/doc':>9}{'R@100':>8}")
    exact_ids, per_query, per_doc = search_figures(None, vectors, queries, args.k, args.doc_passages)
    print_row("exact (brute force)", 0.0, vectors.nbytes / 2**20, 0, per_query, per_doc, 100.0)
    with tempfile.TemporaryDirectory() as folder:
        for index_type in args.types:
            rss = _rss_mb()
            t0 = time.perf_counter()
            index = bf16_exact_index(vectors, Path(folder)) if index_type == BF16_EXACT \
                else faiss_index(index_type, vectors, rng)
            build_s, added = time.perf_counter() - t0, _rss_mb() - rss
            if index_type == BF16_EXACT:
                ids, per_query, per_doc = search_figures(index, vectors, queries, args.k, args.doc_passages)
                print_row(index_type, build_s, index.vectors.numel() * 2 / 2**20, added, per_query, per_doc,
                          100 * recall_at(ids, exact_ids))
                # Against exact search over the fp16 vectors it searches (the fp32 data differs in the 4th digit).
                sample = queries[:100]
                stored_exact = index.search_fp32(sample, args.k)[1]
                print(f"{'':<30}R@100 against exact search over the stored fp16 vectors ({len(sample)} queries): "
                      f"{100 * recall_at(ids[:len(sample)], stored_exact):.1f}", flush=True)
            else:
                search_settings(index, index_type, build_s, added, vectors, queries, exact_ids, args)
            del index
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    main()
