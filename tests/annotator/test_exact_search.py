"""Tests for the torch exact searches of annotator.entity_index.search: both return faiss's flat search's top k."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from annotator.entity_index.search import Bf16ExactIndex, TorchExactIndex
from tests.support.brute_force import brute_force


def test_torch_exact_index_finds_the_brute_force_top_k_in_query_chunks() -> None:
    # The GPU's flat index without a faiss GPU build; the same code runs on the CPU here.
    generator = np.random.default_rng(0)
    vectors = generator.standard_normal((3000, 32)).astype(np.float16)
    queries = generator.standard_normal((7, 32)).astype(np.float32)
    index = TorchExactIndex(vectors, torch.device("cpu"), query_chunk=3)
    scores, rows = index.search(queries, 5)
    expected_scores, expected_rows = brute_force(vectors, queries, 5)
    assert index.ntotal == 3000 and rows.dtype == np.int64 and scores.shape == (7, 5)
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-2, atol=2e-2)
    assert index.search(queries[:0], 5)[1].shape == (0, 5)


@pytest.mark.parametrize("spread", [1.0, 1e-3], ids=["apart: bf16 candidates proven", "crowded: fp32 search"])
def test_bf16_exact_index_finds_the_brute_force_top_k(spread: float, monkeypatch: pytest.MonkeyPatch) -> None:
    # Vectors far apart leave bf16's rounding no room to change the top k; vectors crowded around one point
    # (scores closer than bf16 can tell) leave no proof, and the query is searched in fp32.
    generator = np.random.default_rng(1)
    centre = generator.standard_normal(32)
    vectors = (centre + spread * generator.standard_normal((3000, 32))).astype(np.float16)
    queries = generator.standard_normal((7, 32)).astype(np.float32)
    index = Bf16ExactIndex(vectors, chunk=700, query_chunk=3)  # five chunks of rows, three of queries
    searched_in_fp32 = []
    search_fp32 = index.search_fp32
    monkeypatch.setattr(index, "search_fp32", lambda q, k: searched_in_fp32.append(len(q)) or search_fp32(q, k))
    scores, rows = index.search(queries, 5)
    expected_scores, expected_rows = brute_force(vectors, queries, 5)
    assert index.ntotal == 3000 and rows.dtype == np.int64 and scores.dtype == np.float32
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-5, atol=1e-5)
    assert sum(searched_in_fp32) == (0 if spread == 1.0 else 7)


def test_bf16_exact_index_with_k_beyond_its_candidates_or_no_queries() -> None:
    vectors = np.random.default_rng(2).standard_normal((40, 8)).astype(np.float16)
    queries = np.random.default_rng(3).standard_normal((3, 8)).astype(np.float32)
    index = Bf16ExactIndex(vectors)
    np.testing.assert_array_equal(index.search(queries, 40)[1], brute_force(vectors, queries, 40)[1])
    assert index.search(queries[:0], 5)[1].shape == (0, 5)


def test_a_flat_index_filled_in_place_is_the_one_add_makes() -> None:
    # The float32 exact search of a CPU without bf16 products: its buffer is sized once and written, not grown.
    import faiss

    from annotator.entity_index.search import fill_flat

    generator = np.random.default_rng(2)
    vectors = generator.standard_normal((250_123, 8)).astype(np.float16)  # three slices of 100,000 rows
    queries = generator.standard_normal((5, 8)).astype(np.float32)
    added, filled = faiss.IndexFlatIP(8), faiss.IndexFlatIP(8)
    added.add(vectors.astype(np.float32))
    fill_flat(filled, vectors)
    assert filled.ntotal == added.ntotal == 250_123
    np.testing.assert_array_equal(faiss.rev_swig_ptr(filled.get_xb(), 250_123 * 8),
                                  faiss.rev_swig_ptr(added.get_xb(), 250_123 * 8))
    for got, expected in zip(filled.search(queries, 7), added.search(queries, 7)):
        np.testing.assert_array_equal(got, expected)
    empty = faiss.IndexFlatIP(8)
    fill_flat(empty, vectors[:0])
    assert empty.ntotal == 0
    with pytest.raises(ValueError):
        fill_flat(filled, vectors)  # not empty
