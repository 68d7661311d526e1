"""The served linker, loaded in the background so that the service answers (503, "loading") from its first second."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Literal

from flask import current_app, request

from annotator.runtime.cancellation import LinkingCancelled
from annotator.data_types import Mention
from annotator.serving.linker_thread import ThreadBoundLinker
from annotator.linking import Span
from annotator.service.errors import RequestError
from annotator.service.request_limits import DocumentDropped, client_gone_check

logger = logging.getLogger(__name__)

LoadingState = Literal["loading", "ok", "failed"]


class LinkerNotReady(RequestError):
    """A request came before the linker finished loading, or after its loading failed."""

    status_code = 503


class LinkerLoader:
    """Builds the linker on a thread of its own and hands it out once built.

    The model is built on the linker's thread (`ThreadBoundLinker`); this thread only waits for it, so that the
    application factory returns at once and /health can say "loading" meanwhile.
    """

    def __init__(self, build: Callable[[], ThreadBoundLinker]) -> None:
        self._loaded: Future[ThreadBoundLinker] = Future()
        # A daemon: a process told to stop while its model loads should not wait for the load to end.
        threading.Thread(target=self._load, args=(build,), name="linker-loader", daemon=True).start()

    @property
    def state(self) -> LoadingState:
        if not self._loaded.done():
            return "loading"
        return "failed" if self._loaded.exception() is not None else "ok"

    def linker(self) -> ThreadBoundLinker:
        """The loaded linker.

        Raises:
            LinkerNotReady: (503) it is still loading, or its loading failed (the reason is in the server log).
        """
        if not self._loaded.done():
            raise LinkerNotReady("the linker is still loading; retry when GET /health answers 200")
        error = self._loaded.exception()
        if error is not None:
            raise LinkerNotReady(f"the linker failed to load: {type(error).__name__}: {error}")
        return self._loaded.result()

    def wait(self, timeout_s: float | None = None) -> LoadingState:
        """Waits up to `timeout_s` seconds (None: for ever) for the loading to end; returns the state then."""
        try:
            self._loaded.exception(timeout=timeout_s)
        except TimeoutError:
            pass
        return self.state

    def _load(self, build: Callable[[], ThreadBoundLinker]) -> None:
        started = time.monotonic()
        try:
            linker = build()
        except BaseException as error:  # reported through state and every request, not lost in a thread
            logger.exception("the linker failed to load")
            self._loaded.set_exception(error)
            return
        logger.info("linker ready after %.1f s: %s", time.monotonic() - started, linker.describe())
        self._loaded.set_result(linker)


def served_loader() -> LinkerLoader:
    """The current application's linker loader."""
    loader: LinkerLoader = current_app.extensions["entqa"]
    return loader


def link_for_request(text: str, spans: Sequence[Span] | None) -> list[Mention]:
    """The served linker's mentions in `text`, for the request being served.

    Raises:
        LinkerNotReady: (503) the linker is not loaded.
        DocumentDropped: (503) past ENTQA_DOCUMENT_TIMEOUT, or the client went away.
    """
    (answer,) = link_each_for_request([(text, spans)])
    if isinstance(answer, BaseException):
        raise answer
    return answer


def link_each_for_request(
        documents: Sequence[tuple[str, Sequence[Span] | None]]) -> list[list[Mention] | BaseException]:
    """The served linker's mentions in each document, or the exception that ended its linking, in order: linked
    together (`ThreadBoundLinker.link_each`); a document dropped (past ENTQA_DOCUMENT_TIMEOUT, or the client went
    away) gets DocumentDropped (503).

    Raises:
        LinkerNotReady: (503) the linker is not loaded.
    """
    answers = served_loader().linker().link_each(documents, abandoned=client_gone_check(request.environ))
    return [_dropped(answer) if isinstance(answer, LinkingCancelled) else answer for answer in answers]


def _dropped(cancelled: LinkingCancelled) -> DocumentDropped:
    dropped = DocumentDropped(f"document dropped: {cancelled}")
    dropped.__cause__ = cancelled
    return dropped
