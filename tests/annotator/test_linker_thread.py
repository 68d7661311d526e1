"""ThreadBoundLinker: one thread builds and runs the model, whichever threads ask."""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from annotator.serving.batching import BatchLimits
from annotator.runtime.cancellation import LinkingCancelled, check_cancelled
from annotator.data_types import Mention
from annotator.linking import check_spans
from annotator.pipeline import linker as pipeline_linker
from annotator.pipeline.linker import Linker
from annotator.serving import linker_thread
from annotator.serving.linker_thread import ThreadBoundLinker
from tests.annotator.test_pipeline import TEXT
from tests.annotator.test_tokenization import TRICKY
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
    inner = SlowLinker(seconds=0)
    linker = ThreadBoundLinker(lambda: inner)
    inner.held.set()  # Paris is linked until London's caller has gone away
    with ThreadPoolExecutor(1) as caller:
        first = caller.submit(linker.link, "Paris")
        while not inner.started:
            time.sleep(0.01)
        with pytest.raises(LinkingCancelled, match="the client went away"):
            linker.link("London", abandoned=lambda: True)
        inner.held.clear()
        assert [m.title for m in first.result(timeout=10)] == ["Paris"]
    inner.seconds = 0
    linker.link("Zürich")
    assert inner.started == ["Paris", "Zürich"]


class BatchingLinker(RecordingLinker):
    """A RecordingLinker that also links batches, remembering each pass's texts (`passes`, one-text lists for
    `link`); a text with "boom" in it fails its pass; a pass takes `seconds`, checking for cancellation."""

    def __init__(self, seconds: float = 0) -> None:
        super().__init__()
        self.passes: list[list[str]] = []
        self.seconds = seconds

    def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
        return self.link_batch([text], [spans])[0]

    def link_batch(self, texts: Sequence[str],
                   spans: Sequence[Sequence[tuple[int, int]] | None] | None = None) -> list[list[Mention]]:
        self.passes.append(list(texts))
        self.linked_on.add(threading.get_ident())
        self.started.set()
        self.release.wait(timeout=10)
        until = time.monotonic() + self.seconds
        while time.monotonic() < until:
            check_cancelled()
            time.sleep(0.02)
        if any("boom" in text for text in texts):
            raise RuntimeError("boom")
        return [DictionaryLinker.link(self, text, given) for text, given in zip(texts, spans or [None] * len(texts))]


def held_then_released(inner: BatchingLinker, linker: ThreadBoundLinker,
                       calls: Sequence[tuple[str, Sequence[tuple[int, int]] | None]]) -> list[Future[list[Mention]]]:
    """The answers of `calls`, sent while the linker thread is held on a first document, then released."""
    inner.release.clear()
    with ThreadPoolExecutor(1 + len(calls)) as callers:
        callers.submit(linker.link, "Paris")
        assert inner.started.wait(timeout=10)
        answers = []
        for queued, (text, spans) in enumerate(calls, start=1):
            answers.append(callers.submit(linker.link, text, spans))
            while linker.waiting() < queued:  # queued in this order
                time.sleep(0.01)
        inner.release.set()
        for answer in answers:
            answer.exception(timeout=10)
    return answers


def test_documents_waiting_together_are_linked_in_one_pass_each_caller_getting_its_own_answer() -> None:
    inner = BatchingLinker()
    linker = ThreadBoundLinker(lambda: inner, batch=BatchLimits(documents=8))
    calls = [("Ada Lovelace met Babbage in London.", None), ("Zürich and Paris", [(0, 6), (11, 16)]),
             ("東京", None), ("Babbage in Zürich", [(0, 7)])]
    answers = held_then_released(inner, linker, calls)
    assert inner.passes == [["Paris"], [text for text, _ in calls]]
    assert [answer.result() for answer in answers] == [DictionaryLinker().link(t, s) for t, s in calls]
    assert len(inner.linked_on) == 1  # the linker thread's


def test_a_failing_document_fails_alone_and_the_others_of_its_batch_are_answered() -> None:
    inner = BatchingLinker()
    linker = ThreadBoundLinker(lambda: inner, batch=BatchLimits(documents=8))
    calls = [("London", None), ("boom in Paris", None), ("Paris", [(2, 99)]), ("Zürich", [(0, 6)])]
    answers = held_then_released(inner, linker, calls)
    assert answers[0].result() == DictionaryLinker().link("London")
    with pytest.raises(RuntimeError, match="boom"):
        answers[1].result()
    with pytest.raises(ValueError, match=r"span \(2, 99\) is empty or outside a text of 5 characters"):
        answers[2].result()
    assert answers[3].result() == DictionaryLinker().link("Zürich", [(0, 6)])
    # the invalid spans never reach the linker; the failed pass is linked again one document at a time
    assert inner.passes == [["Paris"], ["London", "boom in Paris", "Zürich"], ["London"], ["boom in Paris"],
                            ["Zürich"]]


def test_the_bound_in_documents_is_honoured_and_batching_off_links_one_at_a_time() -> None:
    calls = [(text, None) for text in ("London", "Paris", "Zürich", "東京", "Babbage")]
    for documents, passes in ((2, [["London", "Paris"], ["Zürich", "東京"], ["Babbage"]]),
                              (1, [[text] for text, _ in calls])):
        inner = BatchingLinker()
        linker = ThreadBoundLinker(lambda: inner, batch=BatchLimits(documents=documents))
        answers = held_then_released(inner, linker, calls)
        assert inner.passes == [["Paris"]] + passes
        assert [answer.result() for answer in answers] == [DictionaryLinker().link(t) for t, _ in calls]


def test_a_linker_without_link_batch_links_the_documents_of_a_batch_one_by_one() -> None:
    inner = RecordingLinker()
    linker = ThreadBoundLinker(lambda: inner, batch=BatchLimits(documents=8))
    texts = ["Ada Lovelace met Babbage in London.", "Zürich and Paris", "東京"] * 3
    with ThreadPoolExecutor(4) as callers:
        answers = list(callers.map(linker.link, texts))
    assert answers == [DictionaryLinker().link(t) for t in texts]


def test_a_document_dropped_part_way_through_a_pass_leaves_the_others_of_it_linked() -> None:
    inner = BatchingLinker(seconds=0.3)  # once released, the pass goes on checking for cancellation, Paris dropped
    linker = ThreadBoundLinker(lambda: inner, batch=BatchLimits(documents=8, wait_ms=400))
    inner.release.clear()  # the pass is held until Paris's caller has gone away
    with ThreadPoolExecutor(2) as callers:
        kept = callers.submit(linker.link, "London")
        dropped = callers.submit(linker.link, "Paris", abandoned=lambda: True)  # asked first after ABANDON_POLL_S
        with pytest.raises(LinkingCancelled, match="the client went away"):
            dropped.result(timeout=10)
        inner.release.set()
        assert [m.title for m in kept.result(timeout=10)] == ["London"]
    assert inner.passes == [["London", "Paris"]]


def test_a_pass_whose_documents_all_passed_their_timeout_stops_and_the_next_one_is_linked() -> None:
    inner = BatchingLinker(seconds=30)
    linker = ThreadBoundLinker(lambda: inner, timeout_s=0.5, batch=BatchLimits(documents=8, wait_ms=200))
    started = time.monotonic()
    with ThreadPoolExecutor(2) as callers:
        late = [callers.submit(linker.link, text) for text in ("London", "Paris")]
        for answer in late:
            with pytest.raises(LinkingCancelled, match="took longer than the limit of 0.5 s"):
                answer.result(timeout=10)
    inner.seconds = 0
    assert [m.title for m in linker.link("Zürich")] == ["Zürich"]
    assert time.monotonic() - started < 5
    assert inner.passes[0] == ["London", "Paris"] and inner.passes[-1] == ["Zürich"]


class PassRecorder:
    """A linker's `link` and `link_batch`, remembering how many documents each pass took."""

    def __init__(self, linker: Linker) -> None:
        self.linker = linker
        self.passes: list[int] = []

    def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
        self.passes.append(1)
        return self.linker.link(text, spans)

    def link_batch(self, texts: Sequence[str],
                   spans: Sequence[Sequence[tuple[int, int]] | None] | None = None) -> list[list[Mention]]:
        self.passes.append(len(texts))
        return self.linker.link_batch(texts, spans)

    def describe(self) -> dict[str, str | int | float]:
        return self.linker.describe()


def test_one_callers_documents_share_passes_within_the_limits_and_get_their_answers_alone(
        tiny_linker: Linker) -> None:
    documents: list[tuple[str, list[tuple[int, int]] | None]] = [
        (TEXT, None), ("Paris", [(0, 5)]), ("Paris", [(3, 9)]), (TRICKY, None), ("Lyon beat Paris", None)]
    alone = [tiny_linker.link(text, spans) for text, spans in documents[:2] + documents[3:]]
    assert all(alone)
    for limit, passes in ((8, [4]), (2, [2, 1, 1])):  # the invalid spans take their place in a batch, then fail
        inner = PassRecorder(tiny_linker)
        answers = ThreadBoundLinker(lambda: inner, batch=BatchLimits(documents=limit)).link_each(documents)
        assert inner.passes == passes
        assert isinstance(answers[2], ValueError) and "outside" in str(answers[2])
        linked = [answer for answer in answers if not isinstance(answer, BaseException)]
        # Padding to other lengths in shared batches moves scores in the last float digits only.
        assert [[(m.start, m.end, m.title) for m in ms] for ms in linked] == \
            [[(m.start, m.end, m.title) for m in ms] for ms in alone]
        assert [m.score for ms in linked for m in ms] == pytest.approx([m.score for ms in alone for m in ms])


def test_a_document_linked_alone_has_its_spans_checked_by_the_linker_alone_the_thread_checks_before_a_shared_pass(
        tiny_linker: Linker, monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[str] = []

    def counting(text: str, spans: Sequence[tuple[int, int]] | None) -> None:
        checked.append(text)
        check_spans(text, spans)

    monkeypatch.setattr(linker_thread, "check_spans", counting)
    monkeypatch.setattr(pipeline_linker, "check_spans", counting)
    linker = ThreadBoundLinker(lambda: tiny_linker, batch=BatchLimits(documents=8))
    with pytest.raises(ValueError, match="outside"):  # linked alone: the linker's own check, the only one
        linker.link("Paris", [(3, 9)])
    assert checked == ["Paris"]
    checked.clear()
    answers = linker.link_each([("Paris", [(0, 5)]), ("Lyon", [(2, 9)])])  # a shared pass: checked before it
    assert isinstance(answers[1], ValueError) and not isinstance(answers[0], BaseException)
    assert checked == ["Paris", "Lyon", "Paris"]  # the thread's two, then the one document left, linked alone
