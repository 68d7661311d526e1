"""Errors of the web module and their mapping to one-line HTTP answers: plain text on the NIF routes, JSON on the
JSON API's."""
from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from annotator.serving.batching import QueueFull
from nif import NifParseError

logger = logging.getLogger(__name__)

# The longest reason a 4xx/5xx answer gives, in characters.
MAX_REASON_CHARS = 500
# Paths whose errors are JSON objects `{"error": reason}`: the JSON API's clients parse every answer as JSON.
JSON_PATH_PREFIX = "/api/"


class RequestError(ValueError):
    """A request the endpoint cannot annotate; `status_code` is the HTTP status to answer with."""

    status_code = 400
    # Header fields the answer carries besides the reason (a 401's WWW-Authenticate).
    headers: Mapping[str, str] = MappingProxyType({})


class UnsupportedContentType(RequestError):
    """The body is declared as something other than UTF-8 Turtle."""

    status_code = 415


def register_error_handlers(app: Flask) -> None:
    """Makes every failure a one-line reason, never a traceback: text/plain, or JSON under `JSON_PATH_PREFIX`.

    Args:
        app: the application to register the handlers on.
    """
    app.register_error_handler(Exception, _handle)


def _handle(error: Exception) -> Response:
    answer = _answer(*failure(error), retry_after_s=getattr(error, "retry_after_s", None))
    if isinstance(error, RequestError):
        answer.headers.update(error.headers)
    return answer


def failure(error: BaseException) -> tuple[str, int]:
    """The one-line reason and the HTTP status that answer `error`; an unexpected one is logged with its traceback,
    which the reason leaves out."""
    if isinstance(error, NifParseError):
        reason, status = f"bad NIF: {error}", 400
    elif isinstance(error, QueueFull):
        reason, status = str(error), 503
    elif isinstance(error, RequestError):
        reason, status = str(error), error.status_code
    elif isinstance(error, HTTPException):
        reason, status = f"{error.code} {error.name}", error.code or 500
    else:
        logger.error("annotation failed", exc_info=error)
        reason, status = f"internal error: {type(error).__name__} (details in the server log)", 500
    # Reasons may quote the request (an IRI, a Content-Type): kept to one short line that UTF-8 can carry, control
    # and other unprintable characters (an escaped U+0000 in an IRI, a lone surrogate) written as escapes.
    line = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in " ".join(reason.split()))
    if len(line) > MAX_REASON_CHARS:
        line = line[:MAX_REASON_CHARS - 1] + "…"
    return line, status


def _answer(reason: str, status: int, *, retry_after_s: int | None = None) -> Response:
    if request.path.startswith(JSON_PATH_PREFIX):
        answer = jsonify(error=reason)
        answer.status_code = status
    else:
        answer = Response(reason + "\n", status=status, content_type="text/plain; charset=utf-8")
    if retry_after_s is not None:
        answer.headers["Retry-After"] = str(retry_after_s)
    return answer
