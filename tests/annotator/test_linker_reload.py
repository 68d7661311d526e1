"""ThreadBoundLinker.reload: the linker over a changed KB is built while documents go on being linked, and served from
the linker thread's next pass."""
from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from annotator.errors import KBFormatError
from annotator.linking import ReloadableLinker
from annotator.serving.batching import BatchLimits
from annotator.serving.linker_thread import ReloadUnsupported, ThreadBoundLinker
from tests.annotator.test_linker_thread import BatchingLinker
from tests.support.dictionary_linker import DictionaryLinker


class ReloadableBatchingLinker(BatchingLinker):
    """A BatchingLinker whose `reloaded()` is the next generation of it: built on the thread that asks, or failing
    with `failure`; `reloads` counts the builds under way, to show that they run one at a time."""

    def __init__(self, generation: int = 0, *, log: list[ReloadableBatchingLinker] | None = None) -> None:
        super().__init__()
        self.generation = generation
        self.log = log if log is not None else []  # every generation, shared
        self.log.append(self)
        self.failure: Exception | None = None
        self.reloaded_on: int | None = None
        self.building = threading.Event()  # set once a reload of it started
        self.finish_building = threading.Event()
        self.finish_building.set()
        self.reloads_under_way = 0
        self.most_reloads_under_way = 0

    def reloaded(self) -> ReloadableBatchingLinker:
        self.reloads_under_way += 1
        self.most_reloads_under_way = max(self.most_reloads_under_way, self.reloads_under_way)
        try:
            self.building.set()
            assert self.finish_building.wait(timeout=10)
            if self.failure is not None:
                raise self.failure
            successor = ReloadableBatchingLinker(self.generation + 1, log=self.log)
            successor.reloaded_on = threading.get_ident()
            return successor
        finally:
            self.reloads_under_way -= 1

    def describe(self) -> dict[str, str | int | float]:
        return {**super().describe(), "generation": self.generation}


def test_the_protocol_tells_a_reloadable_linker() -> None:
    assert isinstance(ReloadableBatchingLinker(), ReloadableLinker)
    assert not isinstance(DictionaryLinker(), ReloadableLinker)


def test_a_reload_is_built_while_a_pass_runs_and_served_from_the_next_pass() -> None:
    first = ReloadableBatchingLinker()
    linker = ThreadBoundLinker(lambda: first, batch=BatchLimits(documents=8))
    first.release.clear()
    queued = ["London", "Zürich", "東京"]
    with ThreadPoolExecutor(1 + len(queued)) as callers:
        held = callers.submit(linker.link, "Paris")
        assert first.started.wait(timeout=10)
        answers = [callers.submit(linker.link, text) for text in queued]
        while linker.waiting() < len(queued):
            time.sleep(0.01)
        description = linker.reload()  # the linker thread is busy with "Paris" all along
        assert description == {**first.describe(), "generation": 1} == linker.describe()
        assert not held.done()
        first.release.set()
        assert [answer.result(timeout=10) for answer in [held, *answers]] == [
            DictionaryLinker().link(text) for text in ["Paris", *queued]]
    (_, second) = first.log
    assert first.passes == [["Paris"]] and second.passes == [queued]  # the pass under way ended with the first
    assert second.reloaded_on not in (threading.get_ident(), *first.linked_on)  # a thread of its own


def test_no_document_is_lost_or_linked_twice_while_reloads_come_and_go() -> None:
    first = ReloadableBatchingLinker()
    linker = ThreadBoundLinker(lambda: first, batch=BatchLimits(documents=4))
    texts = [f"{word} {number}" for number in range(40) for word in ("Paris", "London", "Babbage in Zürich")]
    with ThreadPoolExecutor(6) as callers:
        answers = [callers.submit(linker.link, text) for text in texts]
        for _ in range(5):
            linker.reload()
            time.sleep(0.005)
        assert [answer.result(timeout=30) for answer in answers] == [DictionaryLinker().link(t) for t in texts]
    assert len(first.log) == 6 and linker.describe()["generation"] == 5
    linked = Counter(text for generation in first.log for one_pass in generation.passes for text in one_pass)
    assert linked == Counter(texts)


def test_a_failed_reload_raises_and_the_linker_before_it_goes_on_serving() -> None:
    first = ReloadableBatchingLinker()
    linker = ThreadBoundLinker(lambda: first)
    first.failure = KBFormatError("entities.jsonl line 3: not JSON")
    with pytest.raises(KBFormatError, match="line 3"):
        linker.reload()
    assert linker.describe() == first.describe()
    assert linker.link("Paris") == DictionaryLinker().link("Paris") and first.passes == [["Paris"]]
    first.failure = None
    assert linker.reload()["generation"] == 1  # a later reload that works is served


def test_a_linker_without_reloaded_cannot_reload() -> None:
    linker = ThreadBoundLinker(DictionaryLinker)
    with pytest.raises(ReloadUnsupported, match=r"the served linker \(DictionaryLinker\) cannot reload its KB"):
        linker.reload()
    assert linker.link("Paris") == DictionaryLinker().link("Paris")


def test_reloads_run_one_at_a_time_each_from_the_one_before() -> None:
    first = ReloadableBatchingLinker()
    linker = ThreadBoundLinker(lambda: first)
    first.finish_building.clear()
    with ThreadPoolExecutor(2) as callers:
        one = callers.submit(linker.reload)
        assert first.building.wait(timeout=10)
        other = callers.submit(linker.reload)
        time.sleep(0.1)  # the other waits for the first
        first.finish_building.set()
        assert sorted(answer.result(timeout=10)["generation"] for answer in (one, other)) == [1, 2]
    assert first.most_reloads_under_way == 1 and [one.generation for one in first.log] == [0, 1, 2]
