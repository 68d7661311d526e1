"""An entity linker whose model is built and called on one dedicated thread, for threaded servers.

torch computes on OpenMP (libgomp) thread teams, one per thread that calls into it. When a threaded server
(gunicorn's gthread worker) calls the model from several threads, libgomp manages more threads than there are
cores and stops spin-waiting between parallel regions; on a 2-core CPU every reader call was then about 20 %
slower, for the rest of the process (docs/RESULTS.md §23). One thread keeps one team, and concurrent documents
queue instead of sharing the cores.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from annotator.data_types import Mention
from annotator.linking import EntityLinker, Span


class ThreadBoundLinker:
    """Runs `build()` and then every `link` of the linker it returns on one thread of its own."""

    def __init__(self, build: Callable[[], EntityLinker]) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="linker")
        self._linker = self._thread.submit(build).result()

    def link(self, text: str, spans: Sequence[Span] | None = None) -> list[Mention]:
        """The wrapped linker's answer (its exceptions re-raised here), computed on the linker's thread."""
        return self._thread.submit(self._linker.link, text, spans).result()

    def describe(self) -> dict[str, str]:
        # No model work: answered on the caller's thread, also while a document is being linked.
        return self._linker.describe()
