"""Tests for annotator.runtime.memory.release_freed_memory: cycles are collected and the C heap trimmed."""
from __future__ import annotations

import weakref

import pytest

from annotator.runtime import memory


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_cycles_are_collected_and_the_heap_trimmed(monkeypatch: pytest.MonkeyPatch) -> None:
    trimmed: list[int] = []
    monkeypatch.setattr(memory, "_malloc_trim", lambda: trimmed.append)
    node = _Node()
    alive = weakref.ref(node)
    del node
    memory.release_freed_memory()
    assert alive() is None and trimmed == [0]


def test_without_malloc_trim_only_the_cycles_go(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_malloc_trim", lambda: None)
    memory.release_freed_memory()  # no error where the C library has no malloc_trim


def test_glibc_s_malloc_trim_is_found_here() -> None:
    memory._malloc_trim.cache_clear()
    trim = memory._malloc_trim()
    assert trim is None or trim(0) in (0, 1)
