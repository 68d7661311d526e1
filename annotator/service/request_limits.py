"""The bounds on what one request may cost the service: body size and pace, document length, an absent client.

Each bound ends in a one-line 4xx/5xx answer (`RequestError` subclasses) instead of a request thread or the model
held for as long as a client likes.
"""
from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from flask import Request
from werkzeug.exceptions import HTTPException

from annotator.service.errors import RequestError

READ_BYTES = 64 * 1024


class BodyTooLarge(RequestError):
    """The body is over MAX_CONTENT_LENGTH, as declared (Content-Length) or as sent (chunked)."""

    status_code = 413


class BodyTimeout(RequestError):
    """The client stopped sending its body part-way."""

    status_code = 408


class DocumentTooLong(RequestError):
    """The text is over MAX_DOCUMENT_CHARS: more model time than one request may take."""

    status_code = 413


class DocumentDropped(RequestError):
    """The linker stopped the document: past DOCUMENT_TIMEOUT, or its client went away."""

    status_code = 503


def read_body(request: Request, *, idle_timeout_s: float | None) -> bytes:
    """The whole request body, however it is sent, within `request.max_content_length` bytes.

    Args:
        request: the request being served.
        idle_timeout_s: the longest wait for the next bytes of the body (gunicorn only: others keep their own).

    Raises:
        BodyTooLarge: over the limit, declared or as read.
        BodyTimeout: nothing arrived for `idle_timeout_s`.
        RequestError: the framing is broken (a chunk size that is not hexadecimal, a missing chunk terminator).
    """
    limit = request.max_content_length
    if limit is not None and (request.content_length or 0) > limit:
        raise _over(limit)
    environ = request.environ
    # A server that ends the input stream itself (gunicorn: Content-Length or chunked) is read directly:
    # werkzeug's wrapper would stop silently at the limit, cutting a chunked body instead of refusing it.
    stream = environ["wsgi.input"] if environ.get("wsgi.input_terminated") else request.stream
    body = bytearray()
    with _idle_timeout(environ.get("gunicorn.socket"), idle_timeout_s):
        while chunk := _read(stream, idle_timeout_s):
            body += chunk
            if limit is not None and len(body) > limit:
                raise _over(limit)
    return bytes(body)


def check_document_length(text: str, limit: int | None) -> None:
    """Raises DocumentTooLong when `text` has more than `limit` characters (None: no limit)."""
    if limit is not None and len(text) > limit:
        raise DocumentTooLong(f"document of {len(text)} characters is over the limit of {limit} characters "
                              "(ENTQA_MAX_DOCUMENT_CHARS)")


def check_batch_size(documents: int, characters: int, *, max_documents: int, max_chars: int | None) -> None:
    """Raises DocumentTooLong when a batch holds more than `max_documents` documents or more than `max_chars`
    characters in all (None: no limit): a batch may take as much model time as one document of the longest allowed."""
    if documents > max_documents:
        raise DocumentTooLong(f"{documents} documents are over the limit of {max_documents} documents per batch "
                              "(ENTQA_MAX_DOCUMENTS_PER_REQUEST)")
    if max_chars is not None and characters > max_chars:
        raise DocumentTooLong(f"documents of {characters} characters in all are over the limit of {max_chars} "
                              "characters (ENTQA_MAX_DOCUMENT_CHARS)")


def client_gone_check(environ: dict[str, Any]) -> Callable[[], bool] | None:
    """A test whether the client has closed its connection, on gunicorn (its socket is in the environ); else None.

    A closed connection reads as end-of-file without waiting; a live one that sent nothing more would block.
    """
    connection = environ.get("gunicorn.socket")
    if connection is None:
        return None

    def client_gone() -> bool:
        try:
            return connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except ValueError:  # TLS sockets take no flags: cannot tell, so the client is presumed there
            return False
        except OSError:  # reset by the peer
            return True

    return client_gone


def _over(limit: int) -> BodyTooLarge:
    return BodyTooLarge(f"request body over the limit of {limit} bytes (ENTQA_MAX_CONTENT_LENGTH)")


@contextmanager
def _idle_timeout(connection: socket.socket | None, seconds: float | None) -> Iterator[None]:
    """Makes every read from `connection` raise TimeoutError after `seconds` without a byte, for the block;
    a client that stopped sending (BodyTimeout) is read no more."""
    if connection is None or seconds is None:
        yield
        return
    previous = connection.gettimeout()
    connection.settimeout(seconds)
    try:
        yield
    except BodyTimeout:
        # gunicorn ends a connection whose body failed with a lingering close on its main thread (up to 2 s
        # waiting for the client's FIN, gunicorn.util.close_graceful), accepting nobody meanwhile. A stalled
        # client sends no FIN; with the read side shut, that wait ends at once. The answer still goes out.
        connection.shutdown(socket.SHUT_RD)
        raise
    finally:
        connection.settimeout(previous)


def _read(stream: IO[bytes], idle_timeout_s: float | None) -> bytes:
    try:
        return stream.read(READ_BYTES)
    except TimeoutError as error:
        waited = "" if idle_timeout_s is None else f" for {idle_timeout_s:g} s"
        raise BodyTimeout(f"request body incomplete: nothing received{waited} (ENTQA_BODY_TIMEOUT)") from error
    except HTTPException:  # werkzeug's own verdicts (a client gone before its Content-Length) stand
        raise
    except Exception as error:  # the server's framing errors: gunicorn raises its own types, not OSError
        raise RequestError(f"unreadable request body: {error}") from error
