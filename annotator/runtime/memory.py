"""Handing the memory a load freed back to the OS, so that a serving worker's resident set is what it holds."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or None where the C library has none (musl, macOS)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def release_freed_memory() -> None:
    """Collect reference cycles, then return the C heap's free pages to the OS (`malloc_trim(0)`, every arena).

    Loading makes and drops many temporaries (the int8 export's traced copy and graphs, the KB's parsed lines):
    glibc keeps the pages they freed mapped for later allocations, and cycles wait for the collector. At a
    1M-entity KB's load with the int8 reader that held 0.47 GB after the models and 0.26 GB after the KB, which
    the next stage's peak came on top of. A no-op for the memory where the C library has no `malloc_trim`.
    """
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
