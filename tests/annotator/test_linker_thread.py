"""ThreadBoundLinker: one thread builds and runs the model, whichever threads ask."""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from annotator.cancellation import LinkingCancelled
from annotator.data_types import Mention
from annotator.linker_thread import ThreadBoundLinker
from tests.support.dictionary_linker import DictionaryLinker
from tests.support.slow_linker import SlowLinker


class RecordingLinker(DictionaryLinker):
    """Remembers which thread built it and which threads linked; fails on an empty text; can be held."""

    def __init__(self) -> None:
        super().__init__()
        self.built_on = threading.get_ident()
        self.linked_on: set[int] = set()
        self.release = threading.Event()
        self.release.set()
        self.started = threading.Event()

    def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
        self.started.set()
        self.release.wait(timeout=10)
        self.linked_on.add(threading.get_ident())
        if not text:
            raise ValueError("empty text")
        return super().link(text, spans)


def test_the_model_is_built_and_runs_on_one_thread_of_its_own_whoever_calls() -> None:
    built: list[RecordingLinker] = []

    def build() -> RecordingLinker:
        built.append(RecordingLinker())
        return built[0]

    linker = ThreadBoundLinker(build)
    inner = built[0]
    assert inner.built_on != threading.get_ident()
    texts = ["Ada Lovelace met Babbage in London.", "Zürich and Paris", "東京"] * 4
    with ThreadPoolExecutor(3) as callers:
        answers = list(callers.map(linker.link, texts))
    assert answers == [DictionaryLinker().link(t) for t in texts]
    assert inner.linked_on == {inner.built_on}
    spans = [(0, 12)]
    assert linker.link(texts[0], spans) == DictionaryLinker().link(texts[0], spans)
    with pytest.raises(ValueError, match="empty text"):
        linker.link("")


def test_health_is_answered_while_a_document_is_being_linked() -> None:
    inner = RecordingLinker()
    linker = ThreadBoundLinker(lambda: inner)
    inner.release.clear()
    with ThreadPoolExecutor(1) as caller:
        pending = caller.submit(linker.link, "Paris")
        assert inner.started.wait(timeout=10)
        assert linker.describe() == inner.describe() and not pending.done()
        inner.release.set()
        assert [m.title for m in pending.result(timeout=10)] == ["Paris"]


def test_a_document_past_its_timeout_is_dropped_at_the_next_batch_and_the_next_one_is_linked() -> None:
    inner = SlowLinker(seconds=30)
    linker = ThreadBoundLinker(lambda: inner, timeout_s=0.3)
    started = time.monotonic()
    with pytest.raises(LinkingCancelled, match="took longer than the limit of 0.3 s"):
        linker.link("Paris")
    assert time.monotonic() - started < 2
    inner.seconds = 0
    assert [m.title for m in linker.link("London")] == ["London"]  # queued behind the stopped one
    assert inner.stopped == ["Paris"] and inner.finished == ["London"]


def test_a_queued_document_whose_caller_went_away_is_never_started() -> None:
    inner = SlowLinker(seconds=1)
    linker = ThreadBoundLinker(lambda: inner)
    with ThreadPoolExecutor(1) as caller:
        first = caller.submit(linker.link, "Paris")
        while not inner.started:
            time.sleep(0.01)
        with pytest.raises(LinkingCancelled, match="the client went away"):
            linker.link("London", abandoned=lambda: True)
        assert [m.title for m in first.result(timeout=10)] == ["Paris"]
    inner.seconds = 0
    linker.link("Zürich")
    assert inner.started == ["Paris", "Zürich"]
