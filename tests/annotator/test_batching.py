"""DocumentQueue: which waiting documents the linker thread takes into one pass, within BatchLimits."""
from __future__ import annotations

import threading
import time

import pytest

from annotator.serving.batching import BatchLimits, DocumentQueue, PendingDocument, QueueFull, QueueLimits
from annotator.runtime.cancellation import BatchCancellation, Cancellation, LinkingCancelled


def pending(text: str, cancellation: Cancellation | None = None) -> PendingDocument:
    return PendingDocument(text, None, cancellation or Cancellation())


def texts(batch: list[PendingDocument]) -> list[str]:
    return [document.text for document in batch]


def queue_of(limits: BatchLimits, *documents: PendingDocument) -> DocumentQueue:
    queue = DocumentQueue(limits)
    for document in documents:
        queue.put(document)
    return queue


def test_the_waiting_documents_are_taken_oldest_first_up_to_the_bound_in_documents() -> None:
    queue = queue_of(BatchLimits(documents=2), *(pending(t) for t in "abcde"))
    assert [texts(queue.next_batch()) for _ in range(3)] == [["a", "b"], ["c", "d"], ["e"]]


def test_batching_off_takes_one_document_at_a_time() -> None:
    queue = queue_of(BatchLimits(), *(pending(t) for t in "abc"))
    assert [texts(queue.next_batch()) for _ in range(3)] == [["a"], ["b"], ["c"]]


def test_the_bound_in_characters_closes_a_batch_and_a_longer_document_goes_alone() -> None:
    queue = queue_of(BatchLimits(documents=8, characters=10), *(pending(t) for t in ("aaaa", "bbbb", "cccc",
                                                                                     "d" * 25, "e")))
    assert [texts(queue.next_batch()) for _ in range(3)] == [["aaaa", "bbbb"], ["cccc"], ["d" * 25]]
    assert texts(queue.next_batch()) == ["e"]


def test_documents_dropped_while_they_waited_are_skipped_and_their_answers_settled() -> None:
    expired, abandoned = pending("b", Cancellation(deadline=0)), pending("c")
    abandoned.answer.cancel()  # what a caller does when its client goes away
    queue = queue_of(BatchLimits(documents=8), pending("a"), expired, abandoned, pending("d"))
    batch = queue.next_batch()
    assert texts(batch) == ["a", "d"] and all(document.answer.running() for document in batch)
    with pytest.raises(LinkingCancelled, match="deadline passed"):
        expired.answer.result(timeout=0)


def test_the_thread_waits_for_others_to_join_a_batch_for_the_wait_only() -> None:
    queue = queue_of(BatchLimits(documents=3, wait_ms=400), pending("a"))
    threading.Timer(0.1, queue.put, [pending("b")]).start()
    started = time.monotonic()
    assert texts(queue.next_batch()) == ["a", "b"]  # "c" never comes: the batch goes when the wait is over
    assert 0.35 < time.monotonic() - started < 2

    queue = queue_of(BatchLimits(documents=2, wait_ms=5_000), pending("a"), pending("b"))
    started = time.monotonic()
    assert texts(queue.next_batch()) == ["a", "b"]  # full: no waiting
    assert time.monotonic() - started < 1

    queue = queue_of(BatchLimits(documents=3), pending("a"))
    threading.Timer(0.2, queue.put, [pending("b")]).start()
    assert texts(queue.next_batch()) == ["a"]  # no wait: what is waiting goes at once


def test_the_wait_counts_from_when_the_first_document_was_queued() -> None:
    first = pending("a")
    first.queued_at -= 1.0  # waited behind a long pass already
    queue = queue_of(BatchLimits(documents=3, wait_ms=500), first)
    started = time.monotonic()
    assert texts(queue.next_batch()) == ["a"]
    assert time.monotonic() - started < 0.3


@pytest.mark.parametrize(("limits", "message"), [
    (dict(documents=0), r"batch documents must be an integer of 1 or more \(1: batching off\), got 0"),
    (dict(documents=2.5), "batch documents must be an integer"),
    (dict(characters=0), "batch characters must be an integer of 1 or more, or null for no bound, got 0"),
    (dict(wait_ms=-1), "batch wait must be 0 or more milliseconds, got -1"),
    (dict(wait_ms="10"), "batch wait must be 0 or more milliseconds"),
])
def test_limits_out_of_range_are_refused_naming_the_valid_ones(limits: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BatchLimits(**limits)  # type: ignore[arg-type]


def test_a_batch_is_cancelled_only_once_every_document_of_it_is() -> None:
    first, second = Cancellation(), Cancellation.after(60)
    batch = BatchCancellation([first, second])
    first.cancel("the client went away")
    assert batch.reason() is None
    batch.check()
    second.deadline = 0
    assert batch.reason() == "the client went away; took longer than the limit of 60 s"
    with pytest.raises(LinkingCancelled):
        batch.check()


def test_a_full_queue_refuses_with_when_to_retry_and_an_empty_one_takes_anything() -> None:
    queue = DocumentQueue(BatchLimits(), QueueLimits(documents=2, characters=1_000))
    queue.put(pending("x" * 5_000))  # longer than the bound, but nothing waits: taken
    assert queue.full()
    with pytest.raises(QueueFull) as refused:
        queue.put(pending("a"))
    assert refused.value.retry_after_s == 26  # 5,001 characters at the first guess of 200 a second
    assert texts(queue.next_batch()) == ["x" * 5_000] and not queue.full()
    queue.put(pending("a"), pending("b"))  # both at once, within two documents
    with pytest.raises(QueueFull, match="2 documents of 2 characters wait already"):
        queue.put(pending("c"))
    queue.linked(characters=1_000, seconds=0.1)  # a fast pass: the next wait is shorter
    with pytest.raises(QueueFull) as refused:
        queue.put(pending("c"))
    assert refused.value.retry_after_s == 1


def test_queue_limits_name_what_they_take() -> None:
    with pytest.raises(ValueError, match="queue documents must be an integer of 1 or more, or null"):
        QueueLimits(documents=0)
    with pytest.raises(ValueError, match="queue characters"):
        QueueLimits(characters=True)
