"""Documents waiting for the linker thread, and how it takes them in batches for one shared pass.

Linking several documents in one pass shares the retrieval call and fills the reader's batches, which a short
document alone leaves mostly empty. The thread takes the oldest documents still wanted, up to a bound in documents
and in characters, waiting a little after the first one for others to join it.

The queue is bounded too (`QueueLimits`): documents that would make it longer than its limits are refused at once
with the time after which it will likely have room (`QueueFull`), measured from the characters the thread links
per second, instead of waiting past their clients' patience. An empty queue takes any document, so that a client
that sends one document at a time (GERBIL) is never refused.
"""
from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from annotator.runtime.cancellation import Cancellation, LinkingCancelled
from annotator.data_types import Mention
from annotator.linking import Span


@dataclass(frozen=True)
class BatchLimits:
    """How many waiting documents one pass may take, and how long the linker thread waits for them."""

    documents: int = 1  # 1: every document alone (batching off)
    characters: int | None = None  # of all texts of a batch together (None: no bound); a longer document goes alone
    wait_ms: float = 0  # how long after the first document of a batch was queued the thread waits for others

    def __post_init__(self) -> None:
        if isinstance(self.documents, bool) or not isinstance(self.documents, int) or self.documents < 1:
            raise ValueError(f"batch documents must be an integer of 1 or more (1: batching off), "
                             f"got {self.documents!r}")
        if self.characters is not None and (isinstance(self.characters, bool) or not isinstance(self.characters, int)
                                            or self.characters < 1):
            raise ValueError(f"batch characters must be an integer of 1 or more, or null for no bound, "
                             f"got {self.characters!r}")
        if isinstance(self.wait_ms, bool) or not isinstance(self.wait_ms, (int, float)) or not self.wait_ms >= 0:
            raise ValueError(f"batch wait must be 0 or more milliseconds, got {self.wait_ms!r}")


@dataclass(frozen=True)
class QueueLimits:
    """How much may wait for the linker thread (None: no bound)."""

    documents: int | None = None
    characters: int | None = None  # of all waiting texts together

    def __post_init__(self) -> None:
        for name in ("documents", "characters"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"queue {name} must be an integer of 1 or more, or null for no bound, got {value!r}")


class QueueFull(RuntimeError):
    """Refused: the documents would make the queue longer than its limits. `retry_after_s`: when to try again."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


# The linking rate assumed before the first pass is measured: about a 2-core CPU's (5 s per 1,000 characters).
INITIAL_CHARACTERS_PER_S = 200.0
RATE_SMOOTHING = 0.3  # weight of the newest pass in the measured rate


@dataclass
class PendingDocument:
    """One caller's document, from its queueing to its answer (a result or the exception to raise)."""

    text: str
    spans: Sequence[Span] | None
    cancellation: Cancellation
    answer: Future[list[Mention]] = field(default_factory=Future)
    queued_at: float = field(default_factory=time.monotonic)

    def still_wanted(self) -> bool:
        """Whether its caller still waits; if not, its answer is settled as the cancellation it got."""
        reason = self.cancellation.reason()
        if reason is not None and not self.answer.done():
            self.answer.set_exception(LinkingCancelled(reason))
        return reason is None


class DocumentQueue:
    """The documents waiting for the linker thread, oldest first."""

    def __init__(self, limits: BatchLimits, bounds: QueueLimits = QueueLimits()) -> None:
        self.limits = limits
        self.bounds = bounds
        self._waiting: deque[PendingDocument] = deque()
        self._characters = 0  # of the waiting texts
        self._characters_per_s = INITIAL_CHARACTERS_PER_S
        self._changed = threading.Condition()

    def __len__(self) -> int:
        """How many documents wait, not yet taken into a batch."""
        with self._changed:
            return len(self._waiting)

    def put(self, *documents: PendingDocument) -> None:
        """Queues `documents` in their order, all at once: a batch takes them together as far as its limits allow.

        Raises:
            QueueFull: the queue holds documents already and these would take it past its bounds.
        """
        characters = sum(len(document.text) for document in documents)
        with self._changed:
            if self._waiting and self._over(len(self._waiting) + len(documents), self._characters + characters):
                wait = (self._characters + characters) / self._characters_per_s
                raise QueueFull(f"the service is busy: {len(self._waiting)} documents of {self._characters} "
                                f"characters wait already; retry later", max(1, math.ceil(wait)))
            self._waiting.extend(documents)
            self._characters += characters
            self._changed.notify()

    def full(self) -> bool:
        """Whether one more document of one character would be refused."""
        with self._changed:
            return bool(self._waiting) and self._over(len(self._waiting) + 1, self._characters + 1)

    def linked(self, characters: int, seconds: float) -> None:
        """Counts a pass of the linker thread into the measured rate (characters per second)."""
        if characters and seconds > 0:
            with self._changed:
                self._characters_per_s += RATE_SMOOTHING * (characters / seconds - self._characters_per_s)

    def _over(self, documents: int, characters: int) -> bool:
        bounds = self.bounds
        return ((bounds.documents is not None and documents > bounds.documents)
                or (bounds.characters is not None and characters > bounds.characters))

    def _taken(self) -> PendingDocument:
        head = self._waiting.popleft()
        self._characters -= len(head.text)
        return head

    def next_batch(self) -> list[PendingDocument]:
        """The next documents to link together (at least one: blocks until one is waiting), their answers marked
        running. A document whose caller cancelled it while it waited is skipped."""
        limits = self.limits
        batch: list[PendingDocument] = []
        characters = 0
        with self._changed:
            while True:
                while self._waiting and len(batch) < limits.documents:
                    head = self._waiting[0]
                    if batch and limits.characters is not None and characters + len(head.text) > limits.characters:
                        return batch  # the head starts the next batch
                    self._taken()
                    if head.answer.set_running_or_notify_cancel() and head.still_wanted():
                        batch.append(head)
                        characters += len(head.text)
                if len(batch) == limits.documents:
                    return batch
                if not batch:
                    self._changed.wait()
                    continue
                # Measured from the first document's queueing: one that already waited behind a pass takes no more.
                left = batch[0].queued_at + limits.wait_ms / 1000 - time.monotonic()
                if left <= 0:
                    return batch
                self._changed.wait(left)
