"""An entity linker whose model is built and called on one dedicated thread, for threaded servers.

torch computes on OpenMP (libgomp) thread teams, one per thread that calls into it. When a threaded server
(gunicorn's gthread worker) calls the model from several threads, libgomp manages more threads than there are
cores and stops spin-waiting between parallel regions; on a 2-core CPU every reader call was then about 20 %
slower, for the rest of the process (docs/decisions.md#one-model-thread). One thread keeps one team, and concurrent documents
queue instead of sharing the cores; the thread links the documents waiting together in one pass
(`annotator.serving.batching`) when the linker can. `reload` swaps in the linker over a changed KB between two passes.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as WaitTimeout
from typing import TypeVar

from annotator.serving.batching import BatchLimits, DocumentQueue, PendingDocument, QueueLimits
from annotator.runtime.cancellation import BatchCancellation, Cancellation, LinkingCancelled, cancellable
from annotator.data_types import Mention
from annotator.linking import BatchEntityLinker, EntityLinker, ReloadableLinker, Span, check_spans

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How often a waiting caller asks whether its client is still there.
ABANDON_POLL_S = 0.5


class ReloadUnsupported(TypeError):
    """The served linker cannot be rebuilt over a changed KB: it is no `ReloadableLinker`."""


class ThreadBoundLinker:
    """Runs `build()` and then every `link` of the linker it returns on one thread of its own.

    Documents that wait together, within `batch`'s limits, are linked in one `link_batch` pass when the linker
    has one (`BatchEntityLinker`), each caller getting its own answer; `link_each` queues a caller's several
    documents at once, so that they wait together. A document whose spans are invalid fails alone, before the
    pass; when a pass fails, its documents are linked again one by one, so that only the failing one fails.

    Documents that would take the queue past `queue`'s limits are refused at once (`QueueFull`, with when to retry).
    A document gets `timeout_s` from the call, queueing included. Past that, or once its caller is gone, the
    caller gets LinkingCancelled at once and the linker thread drops the document: before starting it, or at
    the pipeline's next batch (`annotator.runtime.cancellation`), so that it goes on to the documents still wanted. A
    pass over several documents stops there only once all of them are dropped.

    `reload` replaces the linker with the one over the KB as it is now on disk, built while documents go on being
    linked; the linker thread takes it up from its next pass.
    """

    def __init__(self, build: Callable[[], EntityLinker], *, timeout_s: float | None = None,
                 batch: BatchLimits = BatchLimits(), queue: QueueLimits = QueueLimits(),
                 on_pass: Callable[[int, int, float], None] | None = None) -> None:
        self.timeout_s = timeout_s
        self.batch = batch
        self._on_pass = on_pass  # told (documents, characters, seconds) after each pass, on the linker thread
        self._queue = DocumentQueue(batch, queue)
        self._linker: EntityLinker  # the one served: set by the linker thread, replaced by `reload`
        self._reloading = threading.Lock()
        built: Future[EntityLinker] = Future()
        # A daemon: a process that exits with documents still queued does not wait for them.
        threading.Thread(target=self._serve, args=(build, built), name="linker", daemon=True).start()
        built.result()

    def link(self, text: str, spans: Sequence[Span] | None = None, *,
             abandoned: Callable[[], bool] | None = None) -> list[Mention]:
        """The wrapped linker's answer (its exceptions re-raised here), computed on the linker's thread.

        Args:
            text: the document.
            spans: given spans (D2KB), or None (A2KB).
            abandoned: asked every `ABANDON_POLL_S` while waiting: True when nobody wants the answer any more.

        Raises:
            LinkingCancelled: not answered within `timeout_s`, or `abandoned()` turned True.
        """
        (answer,) = self.link_each([(text, spans)], abandoned=abandoned)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def link_each(self, documents: Sequence[tuple[str, Sequence[Span] | None]], *,
                  abandoned: Callable[[], bool] | None = None) -> list[list[Mention] | BaseException]:
        """Each document's mentions, or the exception that ended its linking, in order (as `asyncio.gather` with
        `return_exceptions`): queued together, so that they share passes as far as `batch` allows, and one
        failing leaves the others' answers be.

        Args:
            documents: (text, spans) pairs, as `link` takes them.
            abandoned: as for `link`; True drops every document not answered yet.

        The documents share one `timeout_s` from the call, as one document as long as all of them would: past it,
        or once `abandoned()` turns True, a document not answered yet gets LinkingCancelled.
        """
        cancellation = Cancellation.after(self.timeout_s)
        pending = [PendingDocument(text, spans, cancellation) for text, spans in documents]
        self._queue.put(*pending)
        return [_answer(document, abandoned) for document in pending]

    def waiting(self) -> int:
        """How many documents are queued for the linker thread, not yet taken into a pass."""
        return len(self._queue)

    def full(self) -> bool:
        """Whether the queue would refuse another document now (`QueueFull`)."""
        return self._queue.full()

    def describe(self) -> dict[str, str | int | float]:
        # No model work: answered on the caller's thread, also while a document is being linked.
        return self._linker.describe()

    def reload(self) -> dict[str, str | int | float]:
        """Serves `reloaded()` of the served linker (the KB as it is now on disk) from the linker thread's next pass,
        and returns its description.

        The new linker is built on a thread of its own while the linker thread goes on linking documents with the
        current one; a pass under way ends with the current one, and no document waits for the reload. Reloads run
        one at a time: one asked for during another waits for it, then builds again.

        Raises:
            ReloadUnsupported: the served linker is no `ReloadableLinker`.
            Exception: what `reloaded()` raised (the KB cannot be loaded); the current linker is still served.
        """
        with self._reloading:
            current = self._linker
            if not isinstance(current, ReloadableLinker):
                raise ReloadUnsupported(f"the served linker ({type(current).__name__}) cannot reload its KB; "
                                        "restart the service to serve a changed KB")
            replacement = _on_a_thread_of_its_own(current.reloaded, name="linker-reload")
            self._linker = replacement  # read by the linker thread at the start of each pass
        return replacement.describe()

    def _serve(self, build: Callable[[], EntityLinker], built: Future[EntityLinker]) -> None:
        """The linker thread: builds the linker, then links batch after batch of the documents queued."""
        try:
            linker = build()
        except BaseException as error:  # re-raised by the constructor
            built.set_exception(error)
            return
        self._linker = linker
        built.set_result(linker)
        while True:
            batch = self._queue.next_batch()
            started = time.monotonic()
            _link_pending(self._linker, batch)  # the one served now: `reload` may have replaced it since
            characters, seconds = sum(len(document.text) for document in batch), time.monotonic() - started
            self._queue.linked(characters, seconds)
            if self._on_pass is not None:
                self._on_pass(len(batch), characters, seconds)


def _on_a_thread_of_its_own(build: Callable[[], T], *, name: str) -> T:
    """`build()` (its exception re-raised here), run on a new thread that ends with it.

    Not on the caller's thread: a thread that computes with torch keeps an OpenMP thread team for as long as it
    lives, and a server's request threads live on; a thread that ends gives its team back
    (docs/decisions.md#one-model-thread).
    """
    built: Future[T] = Future()

    def run() -> None:
        try:
            built.set_result(build())
        except BaseException as error:  # re-raised on the caller's thread
            built.set_exception(error)

    # A daemon: a process told to stop does not wait for a reload to end.
    threading.Thread(target=run, name=name, daemon=True).start()
    return built.result()


def _answer(document: PendingDocument,
            abandoned: Callable[[], bool] | None) -> list[Mention] | BaseException:
    """The document's mentions or exception, once the linker thread settles it; LinkingCancelled once it is
    cancelled first (its deadline, or `abandoned()`), without waiting for the linker thread to drop it."""
    cancellation = document.cancellation
    while True:
        wait = cancellation.remaining()
        if abandoned is not None:
            wait = ABANDON_POLL_S if wait is None else min(ABANDON_POLL_S, wait)
        if cancellation.reason() is not None:  # cancelled while an earlier document of its call was awaited
            wait = 0
        try:
            error = document.answer.exception(timeout=wait)
        except WaitTimeout:
            if abandoned is not None and abandoned():
                cancellation.cancel("the client went away")
            reason = cancellation.reason()
            if reason is not None:
                document.answer.cancel()  # succeeds while it is still queued
                return LinkingCancelled(reason)
        else:
            return document.answer.result() if error is None else error


def _link_pending(linker: EntityLinker, batch: Sequence[PendingDocument]) -> None:
    """Settles the answer of every document of `batch`: in one pass where the linker can, else one by one.

    Spans are checked here only ahead of a shared pass, where a document's invalid spans would fail the others'
    answers: it fails alone instead. A document linked alone is checked by the linker itself (`Linker.link`), once.
    """
    ready = [document for document in batch if document.still_wanted()]
    if len(ready) > 1 and isinstance(linker, BatchEntityLinker):
        ready = [document for document in ready if _valid_spans(document)]
    if len(ready) > 1 and isinstance(linker, BatchEntityLinker):
        try:
            with cancellable(BatchCancellation([document.cancellation for document in ready])):
                answers = linker.link_batch([d.text for d in ready], [d.spans for d in ready])
        except LinkingCancelled:
            pass  # every one of them was dropped: settled below, none started again
        except Exception:  # which document failed is found by linking them alone
            logger.warning("a pass over %d documents failed; linking them one by one", len(ready), exc_info=True)
        else:
            for document, mentions in zip(ready, answers):
                document.answer.set_result(mentions)
            return
    for document in ready:
        if not document.still_wanted():  # a document whose caller gave up while it queued is never started
            continue
        try:
            with cancellable(document.cancellation):
                mentions = linker.link(document.text, document.spans)
        except BaseException as error:  # re-raised on the caller's thread
            document.answer.set_exception(error)
        else:
            document.answer.set_result(mentions)


def _valid_spans(document: PendingDocument) -> bool:
    """Whether the document's spans fit its text; if not, its answer is settled as the error."""
    try:
        check_spans(document.text, document.spans)
    except ValueError as error:
        document.answer.set_exception(error)
        return False
    return True
