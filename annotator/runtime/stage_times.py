"""The linker's stages timed for whoever listens (the service's metrics): each stage of a pass reports its name and
seconds to the listeners registered in this process."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_listeners: list[Callable[[str, float], None]] = []


def listen(listener: Callable[[str, float], None]) -> None:
    """Have `listener(stage, seconds)` called after every timed stage, on the thread that ran it."""
    if listener not in _listeners:
        _listeners.append(listener)


@contextmanager
def timed(stage: str) -> Iterator[None]:
    """Times the block as `stage` for the listeners (nothing is timed while none listens)."""
    if not _listeners:
        yield
        return
    started = time.perf_counter()
    try:
        yield
    finally:
        seconds = time.perf_counter() - started
        for listener in _listeners:
            listener(stage, seconds)
