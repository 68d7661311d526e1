"""KB changes picked up by the running service: the served linker rebuilt over the KB as it is now on disk, on SIGHUP
and through POST /api/kb/reload (annotator.service.admin), while linking goes on. A reload that fails leaves the
previous KB served and logs why.

Under gunicorn every worker serves a linker of its own: the master forwards its SIGHUP to them (gunicorn.conf.py)
rather than restarting them, and the worker that answers POST /api/kb/reload signals the master, so that the others
reload too.
"""
from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Mapping
from typing import Any

from annotator.errors import AnnotatorError, ConfigError, KBFormatError
from annotator.service.errors import RequestError
from annotator.service.loading import LinkerLoader
from annotator.serving.linker_thread import ReloadUnsupported, ThreadBoundLinker

logger = logging.getLogger(__name__)

# Set by gunicorn.conf.py in the master (to its pid) once it forwards SIGHUP to its workers, inherited by them: without
# it, a SIGHUP to gunicorn's master would restart every worker (each loading its model again, answering 503 meanwhile).
HUP_FORWARDING_VARIABLE = "_ENTQA_MASTER_FORWARDS_HUP"

# Failures whose reason says it all (a KB file that cannot be read): logged without their traceback.
_EXPECTED_FAILURES = (AnnotatorError, ConfigError, KBFormatError, OSError)


class ReloadFailed(RequestError):
    """The KB could not be loaded again; the previous one is still served."""

    status_code = 500


class ReloadNotSupported(RequestError):
    """The served linker cannot reload its KB (a linker injected without `reloaded`)."""

    status_code = 501


def reload_linker(linker: ThreadBoundLinker, *, cause: str) -> tuple[dict[str, str | int | float], float]:
    """Reloads the served linker's KB (`ThreadBoundLinker.reload`) and logs the outcome, naming `cause`.

    Returns:
        What is served now (the new linker's description) and the seconds the reload took.

    Raises:
        ReloadNotSupported: (501) the linker cannot reload.
        ReloadFailed: (500) the KB could not be loaded; the previous one is still served.
    """
    started = time.monotonic()
    try:
        description = linker.reload()
    except ReloadUnsupported as error:
        logger.warning("no KB reload (%s): %s", cause, error)
        raise ReloadNotSupported(str(error)) from error
    except Exception as error:
        reason = f"the KB could not be reloaded: {type(error).__name__}: {error}; the previous KB is still served"
        logger.error("KB reload (%s) failed after %.1f s: %s", cause, time.monotonic() - started, reason,
                     exc_info=not isinstance(error, _EXPECTED_FAILURES))
        raise ReloadFailed(reason) from error
    seconds = time.monotonic() - started
    logger.info("KB reloaded (%s) in %.1f s; now serving %s", cause, seconds, description)
    return description, seconds


def reload_on_hangup(loader: LinkerLoader) -> bool:
    """Makes SIGHUP reload the KB of `loader`'s linker, once it is loaded; True when the handler was installed.

    Python sets signal handlers from the main thread only: an app created on another thread leaves SIGHUP as it is
    (False). The handler returns at once; the reload runs on a thread of its own and logs its outcome.
    """
    if not hasattr(signal, "SIGHUP") or threading.current_thread() is not threading.main_thread():
        return False

    def hung_up(signum: int, frame: Any) -> None:
        threading.Thread(target=_reload_after_hangup, args=(loader,), name="kb-reload", daemon=True).start()

    signal.signal(signal.SIGHUP, hung_up)
    return True


def signal_other_workers(environ: Mapping[str, Any]) -> bool:
    """Under a gunicorn master that forwards SIGHUP to its workers, sends it SIGHUP, so that every worker reloads its
    KB (this one too, again); True when sent. Anywhere else (no gunicorn, or a master that would restart its workers
    on SIGHUP) nothing is sent."""
    if not str(environ.get("SERVER_SOFTWARE", "")).startswith("gunicorn"):
        return False
    master = os.getppid()
    if os.environ.get(HUP_FORWARDING_VARIABLE) != str(master):
        logger.warning("the other workers are not told to reload their KB: gunicorn was started without the "
                       "project's gunicorn.conf.py, whose master forwards SIGHUP to its workers")
        return False
    os.kill(master, signal.SIGHUP)
    return True


def _reload_after_hangup(loader: LinkerLoader) -> None:
    if loader.state == "loading":
        logger.info("SIGHUP: the linker is still loading; its KB is reloaded once it is in")
    if loader.wait() != "ok":  # a linker still loading may have read the KB before the change
        logger.warning("SIGHUP: no KB reload, the linker failed to load")
        return
    try:
        reload_linker(loader.linker(), cause="SIGHUP")
    except RequestError:
        pass  # logged
