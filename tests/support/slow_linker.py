"""A test linker that takes its time over each document, in steps that honour cancellation (tests only)."""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from annotator.runtime.cancellation import LinkingCancelled, check_cancelled
from annotator.data_types import Mention
from tests.support.dictionary_linker import DictionaryLinker

STEP_S = 0.05


class SlowLinker(DictionaryLinker):
    """DictionaryLinker after `seconds` per document, checking for cancellation every `STEP_S`, as the pipeline
    does between its batches; remembers the texts it started, finished and stopped.

    `held`, where set, holds each document (also checking for cancellation) for as long as it stays set, on top of
    `seconds`: a test holds a document while it looks at the service, instead of guessing a time long enough.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.held = threading.Event()
        self.started: list[str] = []
        self.finished: list[str] = []
        self.stopped: list[str] = []

    def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
        self.started.append(text)
        until = time.monotonic() + self.seconds
        try:
            while time.monotonic() < until or self.held.is_set():
                check_cancelled()
                time.sleep(STEP_S)
        except LinkingCancelled:
            self.stopped.append(text)
            raise
        self.finished.append(text)
        return super().link(text, spans)
