"""Bench: faiss index types of annotator.retrieval on synthetic clustered vectors (a stand-in for a large KB).

Prints, for each index type: build time, resident memory added, query time (batch and one document's
passages) and R@100 against exact search. Figures are printed, never asserted.

    python -m bench.index_scaling --rows 6000000 --dim 384 --types flat hnsw ivfpq
"""
from __future__ import annotations

import argparse
import resource
import time

import faiss
import numpy as np

from annotator.retrieval import INDEX_FACTORIES, new_faiss_index


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--clusters", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--doc-passages", type=int, default=20, help="queries of one document (one faiss call)")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--types", nargs="+", default=sorted(INDEX_FACTORIES), choices=sorted(INDEX_FACTORIES))
    parser.add_argument("--threads", type=int, default=faiss.omp_get_max_threads())
    args = parser.parse_args()
    faiss.omp_set_num_threads(args.threads)

    t0 = time.perf_counter()
    vectors = clustered_vectors(args.rows, args.dim, clusters=args.clusters, seed=0)
    # Queries are noisy copies of KB vectors, as a passage is close to the entities it mentions.
    rng = np.random.default_rng(1)
    queries = vectors[rng.integers(0, args.rows, args.queries)] + 0.3 * rng.standard_normal(
        (args.queries, args.dim), dtype=np.float32) / np.sqrt(args.dim)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    print(f"data: {args.rows:,} x {args.dim} float32 ({vectors.nbytes / 2**30:.2f} GiB) in "
          f"{time.perf_counter() - t0:.1f} s; {args.queries} queries; k={args.k}; {args.threads} threads")

    exact_ids = None
    print(f"{'type':<8}{'build s':>10}{'index MiB':>11}{'RSS+ MiB':>10}{'ms/query':>10}{'ms/doc':>9}{'R@100':>8}")
    for index_type in ["flat", *[t for t in args.types if t != "flat"]]:
        rss = _rss_mb()
        t0 = time.perf_counter()
        index = new_faiss_index(index_type, args.dim, args.rows)
        if not index.is_trained:
            index.train(vectors[rng.choice(args.rows, min(args.rows, 256 * 1024), replace=False)])
        index.add(vectors)
        build_s = time.perf_counter() - t0
        size_mib = faiss.serialize_index(index).nbytes / 2**20 if args.rows <= 2_000_000 else float("nan")
        added = _rss_mb() - rss
        t0 = time.perf_counter()
        _, ids = index.search(queries, args.k)
        per_query = (time.perf_counter() - t0) * 1000 / args.queries
        t0 = time.perf_counter()
        for start in range(0, 200, args.doc_passages):
            index.search(queries[start:start + args.doc_passages], args.k)
        per_doc = (time.perf_counter() - t0) * 1000 / (200 // args.doc_passages)
        if index_type == "flat":
            exact_ids = ids
        recall = recall_at(ids, exact_ids)
        print(f"{index_type:<8}{build_s:>10.1f}{size_mib:>11.0f}{added:>10.0f}{per_query:>10.2f}{per_doc:>9.1f}"
              f"{100 * recall:>8.1f}", flush=True)
        if index_type not in args.types:
            print("        (flat is the exact reference)")
        del index
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    main()
