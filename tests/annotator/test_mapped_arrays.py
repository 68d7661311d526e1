"""Tests for the memory-mapped index arrays of annotator.entity_index.folder: `release_pages` takes a mapping's
pages out of the resident set (values stay, an array in memory is left alone); `read_rows` reads rows from the
file, as indexing would, without mapping them."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from annotator.entity_index.folder import read_rows, release_pages


def _file_resident_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssFile:"):
            return int(line.split()[1])
    raise AssertionError("no RssFile in /proc/self/status")


def test_released_pages_leave_the_resident_set_and_read_back_the_same(tmp_path: Path) -> None:
    values = np.arange(4 << 20, dtype=np.float32).reshape(-1, 64)  # 16 MiB
    np.save(tmp_path / "vectors.npy", values)
    mapped = np.load(tmp_path / "vectors.npy", mmap_mode="r")
    before = _file_resident_kib()
    assert float(np.asarray(mapped, dtype=np.float64).sum()) == float(values.astype(np.float64).sum())
    read = _file_resident_kib()
    release_pages(mapped[10:20])  # a slice reaches the mapping of its array
    released = _file_resident_kib()
    assert read - before > 12 << 10 and read - released > 12 << 10
    np.testing.assert_array_equal(mapped[::997], values[::997])  # read again from the file


def test_an_array_in_memory_is_left_alone() -> None:
    values = np.ones((3, 4), dtype=np.float16)
    release_pages(values)
    release_pages(values[1:])
    np.testing.assert_array_equal(values, 1)


def test_read_rows_is_indexing_read_from_the_file_without_mapping_it(tmp_path: Path) -> None:
    vectors = np.random.default_rng(0).standard_normal((50_000, 48)).astype(np.float16)  # 4.6 MiB
    lengths = np.arange(50_000, dtype=np.int32)
    np.save(tmp_path / "vectors.npy", vectors)
    np.save(tmp_path / "lengths.npy", lengths)
    mapped = np.load(tmp_path / "vectors.npy", mmap_mode="r")
    mapped_lengths = np.load(tmp_path / "lengths.npy", mmap_mode="r")
    rows = np.array([49_999, 0, 7, 7, 31_000, 12_345])  # any order, repeats
    before = _file_resident_kib()
    found = read_rows(mapped, np.random.default_rng(1).integers(0, 50_000, 2000))
    assert _file_resident_kib() - before < 1024 and found.shape == (2000, 48)  # not mapped (4.6 MiB were)
    np.testing.assert_array_equal(read_rows(mapped, rows), vectors[rows])
    assert read_rows(mapped, rows).dtype == np.float16 and read_rows(mapped, rows).flags.c_contiguous
    np.testing.assert_array_equal(read_rows(mapped_lengths, rows), lengths[rows])
    assert read_rows(mapped, np.array([], dtype=np.int64)).shape == (0, 48)
    np.testing.assert_array_equal(read_rows(vectors, rows), vectors[rows])  # in memory: indexed
    np.testing.assert_array_equal(read_rows(mapped[10:], rows[1:]), vectors[10:][rows[1:]])  # a slice: indexed
    with pytest.raises(IndexError):
        read_rows(mapped, np.array([50_000]))
