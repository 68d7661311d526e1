"""An entity linker whose model is built and called on one dedicated thread, for threaded servers.

torch computes on OpenMP (libgomp) thread teams, one per thread that calls into it. When a threaded server
(gunicorn's gthread worker) calls the model from several threads, libgomp manages more threads than there are
cores and stops spin-waiting between parallel regions; on a 2-core CPU every reader call was then about 20 %
slower, for the rest of the process (docs/decisions.md#one-model-thread). One thread keeps one team, and concurrent documents
queue instead of sharing the cores.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as WaitTimeout

from annotator.cancellation import Cancellation, LinkingCancelled, cancellable
from annotator.data_types import Mention
from annotator.linking import EntityLinker, Span

# How often a waiting caller asks whether its client is still there.
ABANDON_POLL_S = 0.5


class ThreadBoundLinker:
    """Runs `build()` and then every `link` of the linker it returns on one thread of its own.

    A document gets `timeout_s` from the call, queueing included. Past that, or once its caller is gone, the
    caller gets LinkingCancelled at once and the linker thread drops the document: before starting it, or at
    the pipeline's next batch (`annotator.cancellation`), so that it goes on to the documents still wanted.
    """

    def __init__(self, build: Callable[[], EntityLinker], *, timeout_s: float | None = None) -> None:
        self.timeout_s = timeout_s
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="linker")
        self._linker = self._thread.submit(build).result()

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
        cancellation = Cancellation.after(self.timeout_s)
        job = self._thread.submit(self._link_unless_cancelled, cancellation, text, spans)
        while True:
            wait = cancellation.remaining()
            if abandoned is not None:
                wait = ABANDON_POLL_S if wait is None else min(ABANDON_POLL_S, wait)
            try:
                return job.result(timeout=wait)
            except WaitTimeout:
                if abandoned is not None and abandoned():
                    cancellation.cancel("the client went away")
                reason = cancellation.reason()
                if reason is not None:
                    job.cancel()  # succeeds while it is still queued
                    raise LinkingCancelled(reason) from None

    def describe(self) -> dict[str, str]:
        # No model work: answered on the caller's thread, also while a document is being linked.
        return self._linker.describe()

    def _link_unless_cancelled(self, cancellation: Cancellation, text: str,
                               spans: Sequence[Span] | None) -> list[Mention]:
        cancellation.check()  # a document whose caller gave up while it queued is never started
        with cancellable(cancellation):
            return self._linker.link(text, spans)
