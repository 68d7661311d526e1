"""Request ids: every request is given one (the client's `X-Request-Id` when it is a sane token, else a new one),
the answer carries it back, and every log line written while the request is handled names it."""
from __future__ import annotations

import contextvars
import logging
import re
import uuid

from flask import Flask, Response, request

HEADER = "X-Request-Id"
NONE = "-"  # the id of log lines written outside any request (loading, the model thread)
# What a client's id may be: a token that a log line or a header can carry as it is.
_SANE = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_current: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default=NONE)


def current_request_id() -> str:
    """The id of the request being handled on this thread, or `NONE`."""
    return _current.get()


def register_request_ids(app: Flask) -> None:
    """Gives every request of `app` an id, returns it in `X-Request-Id` and names it in the log lines written while
    it is handled (`%(request_id)s` in a log format; see `install_log_records`)."""
    install_log_records()

    @app.before_request
    def take_id() -> None:
        given = request.headers.get(HEADER, "")
        request.environ["entqa.request_id_token"] = _current.set(given if _SANE.fullmatch(given)
                                                                  else uuid.uuid4().hex)

    @app.after_request
    def give_id(response: Response) -> Response:
        response.headers[HEADER] = current_request_id()
        return response

    @app.teardown_request
    def forget_id(_: BaseException | None) -> None:
        token = request.environ.pop("entqa.request_id_token", None)
        if token is not None:
            _current.reset(token)


def install_log_records() -> None:
    """Makes every log record carry `request_id` (once per process), so that a format may name it."""
    factory = logging.getLogRecordFactory()
    if getattr(factory, "names_request_ids", False):
        return

    def record(*args: object, **kwargs: object) -> logging.LogRecord:
        made = factory(*args, **kwargs)
        made.request_id = current_request_id()
        return made

    record.names_request_ids = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(record)
