"""The bounds on one request (annotator.service.request_limits) through Flask's test client, on the WSGI stream
gunicorn gives."""
from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO

import pytest
from flask import Flask
from werkzeug.test import EnvironBuilder, run_wsgi_app
from gunicorn.http.errors import InvalidChunkSize

from nif import parse_document
from tests.support.dictionary_linker import DictionaryLinker
from tests.support.gerbil_requests import HEADERS, gerbil_request, span_of
from tests.support.slow_linker import SlowLinker
from annotator.service import create_app
from annotator.service.request_limits import client_gone_check

LIMIT = 32 * 1024
# What gunicorn puts in the environ for a chunked body: a stream it ends itself, and no Content-Length.
CHUNKED = {**HEADERS, "Transfer-Encoding": "chunked"}


def _app(**config: object) -> Flask:
    return create_app({"TESTING": True, "MAX_CONTENT_LENGTH": LIMIT, **config}, linker=DictionaryLinker())


def _post_stream(app: Flask, stream: IO[bytes], **environ: object) -> tuple[int, str]:
    """POSTs what `stream` gives as a chunked body, in the environ gunicorn makes for one."""
    request = EnvironBuilder(path="/", method="POST", headers=CHUNKED).get_environ()
    request.update({"wsgi.input": stream, "wsgi.input_terminated": True, **environ})
    request.pop("CONTENT_LENGTH", None)
    answer, status, _ = run_wsgi_app(app, request, buffered=True)
    return int(status.split()[0]), b"".join(answer).decode()


def _d2kb_request_of_size(size: int) -> bytes:
    """A D2KB request of exactly `size` bytes whose only given span, Paris, is written last."""
    text = "Ada Lovelace wrote to Paris."
    body = gerbil_request(text, [span_of(text, "Paris")])
    return b"#" + b"x" * (size - len(body) - 2) + b"\n" + body


def test_a_chunked_body_up_to_the_limit_is_read_whole() -> None:
    body = _d2kb_request_of_size(LIMIT)
    assert len(body) == LIMIT
    status, answer = _post_stream(_app(), io.BytesIO(body))
    assert status == 200
    assert [a.uris for a in parse_document(answer.encode()).annotations] == [("http://dbpedia.org/resource/Paris",)]


def test_a_chunked_body_over_the_limit_is_a_413_not_cut() -> None:
    status, answer = _post_stream(_app(), io.BytesIO(_d2kb_request_of_size(LIMIT + 1)))
    assert (status, answer) == (413, f"request body over the limit of {LIMIT} bytes (ENTQA_MAX_CONTENT_LENGTH)\n")


def test_broken_chunk_framing_is_a_400() -> None:
    class BadChunkSize(io.RawIOBase):
        def read(self, size: int = -1) -> bytes:
            raise InvalidChunkSize(b"zz")  # what gunicorn's chunked reader raises for a chunk size "zz"

    status, answer = _post_stream(_app(), BadChunkSize())
    assert status == 400 and answer.count("\n") == 1
    assert answer.startswith("unreadable request body: Invalid chunk size")


@pytest.fixture
def connection() -> Iterator[tuple[socket.socket, socket.socket]]:
    """(server side, client side) of a connected pair of sockets."""
    server, client = socket.socketpair()
    with server, client:
        yield server, client


def test_a_body_that_stops_arriving_is_a_408(connection: tuple[socket.socket, socket.socket]) -> None:
    server, client = connection
    client.sendall(gerbil_request("Paris")[:100])
    started = time.monotonic()
    status, answer = _post_stream(_app(BODY_TIMEOUT=0.3), server.makefile("rb", buffering=0),
                                  **{"gunicorn.socket": server})
    assert (status, answer) == (408, "request body incomplete: nothing received for 0.3 s (ENTQA_BODY_TIMEOUT)\n")
    assert time.monotonic() - started < 2
    assert server.gettimeout() is None  # gunicorn's own reads are left as they were


def test_a_client_that_closed_its_connection_is_seen_gone(connection: tuple[socket.socket, socket.socket]) -> None:
    server, client = connection
    gone = client_gone_check({"gunicorn.socket": server})
    assert gone is not None and not gone()
    client.close()
    assert gone()
    assert client_gone_check({}) is None


def test_a_client_that_sent_more_is_not_seen_gone(connection: tuple[socket.socket, socket.socket]) -> None:
    server, client = connection
    client.sendall(b"GET /health HTTP/1.1\r\n\r\n")  # pipelined: its data is peeked at, never consumed
    gone = client_gone_check({"gunicorn.socket": server})
    assert gone is not None and not gone() and server.recv(3) == b"GET"


def test_a_document_over_the_length_limit_is_a_413_naming_it() -> None:
    response = _app(MAX_DOCUMENT_CHARS=10).test_client().post("/", data=gerbil_request("Paris and London"),
                                                              headers=HEADERS)
    assert response.status_code == 413
    assert response.get_data(as_text=True) == ("document of 16 characters is over the limit of 10 characters "
                                               "(ENTQA_MAX_DOCUMENT_CHARS)\n")


def test_a_document_past_its_deadline_is_a_503_and_the_linker_stops_it() -> None:
    linker = SlowLinker(seconds=30)
    client = create_app({"TESTING": True, "DOCUMENT_TIMEOUT": 0.3}, linker=linker).test_client()
    started = time.monotonic()
    response = client.post("/", data=gerbil_request("Paris"), headers=HEADERS)
    assert response.status_code == 503
    assert response.get_data(as_text=True) == "document dropped: took longer than the limit of 0.3 s\n"
    assert time.monotonic() - started < 2
    deadline = time.monotonic() + 2
    while not linker.stopped and time.monotonic() < deadline:
        time.sleep(0.01)
    assert linker.stopped == ["Paris"] and not linker.finished


def test_beyond_the_queue_limit_a_request_gets_503_with_retry_after_and_one_at_a_time_never_does() -> None:
    linker = SlowLinker(seconds=0.1)
    app = create_app({"TESTING": True, "QUEUE_DOCUMENTS": 1, "BATCH_DOCUMENTS": 1}, linker=linker)
    client = app.test_client()
    for text in ("Paris", "London", "Paris"):  # one client, one document at a time: always taken
        assert client.post("/", data=gerbil_request(text), headers=HEADERS).status_code == 200
    answers: dict[str, int] = {}

    def post(text: str) -> None:
        answers[text] = app.test_client().post("/api/link", json={"text": text}).status_code

    linker.held.set()  # the running document is held until the queue behind it was looked at
    running = threading.Thread(target=post, args=("running Paris",))
    running.start()
    _wait_for(lambda: "running Paris" in linker.started)
    waiting = threading.Thread(target=post, args=("waiting London",))
    waiting.start()
    _wait_for(lambda: client.get("/health/ready").status_code == 503)
    assert client.get("/health/ready").get_json()["status"] == "full"
    refused = client.post("/api/link", json={"text": "refused Paris"})
    assert refused.status_code == 503 and int(refused.headers["Retry-After"]) >= 1
    assert refused.get_json() == {"error": "the service is busy: 1 documents of 14 characters wait already; "
                                           "retry later"}
    nif = client.post("/", data=gerbil_request("Paris"), headers=HEADERS)
    assert nif.status_code == 503 and "Retry-After" in nif.headers and nif.mimetype == "text/plain"
    linker.held.clear()
    running.join()
    waiting.join()
    assert answers == {"running Paris": 200, "waiting London": 200}
    assert client.get("/health/ready").get_json() == {"status": "ready"}
    assert "refused Paris" not in linker.started


def _wait_for(condition: Callable[[], bool], timeout_s: float = 5) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
