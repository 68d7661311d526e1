"""The bounds on one request under a real gunicorn (project's gunicorn.conf.py, loopback): chunked bodies, slow
and vanished clients, the per-document deadline, /health while documents queue."""
from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.gerbil_requests import HEADERS, gerbil_request, span_of
from bench.gunicorn_process import Server, gunicorn_serving, raw_exchange

pytestmark = pytest.mark.slow

LIMIT = 64 * 1024
BODY_TIMEOUT_S = 2
LINK_S = 1.5  # SlowLinker's time per document


@pytest.fixture(scope="module")
def dictionary_server() -> Iterator[Server]:
    with gunicorn_serving("tests.support.wsgi_test_app:app", env={"ENTQA_MAX_CONTENT_LENGTH": str(LIMIT),
                                                               "ENTQA_BODY_TIMEOUT": str(BODY_TIMEOUT_S)}) as server:
        yield server


@pytest.fixture(scope="module")
def slow_server() -> Iterator[Server]:
    with gunicorn_serving("tests.support.wsgi_slow_app:app", env={"SLOW_LINKER_SECONDS": str(LINK_S)}) as server:
        yield server


def _chunked(body: bytes, *, size_line: bytes | None = None) -> bytes:
    head = (b"POST /gerbil HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-turtle\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    return head + (size_line or b"%x" % len(body)) + b"\r\n" + body + b"\r\n0\r\n\r\n"


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def _post(url: str, body: bytes, timeout: float = 30) -> tuple[int, bytes]:
    request = urllib.request.Request(f"{url}/gerbil", data=body, headers=HEADERS, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _timed_health(url: str) -> float:
    started = time.monotonic()
    with urllib.request.urlopen(f"{url}/health", timeout=10) as response:
        assert response.status == 200
    return time.monotonic() - started


def _d2kb_body_of_size(size: int) -> bytes:
    text = "Ada Lovelace wrote to Paris."
    body = gerbil_request(text, [span_of(text, "Paris")])  # the given span comes last
    return b"#" + b"x" * (size - len(body) - 2) + b"\n" + body


def test_a_malformed_chunk_size_is_a_400(dictionary_server: Server) -> None:
    answer = raw_exchange(dictionary_server.port, _chunked(gerbil_request("Paris"), size_line=b"zz"))
    assert _status(answer) == 400 and b"unreadable request body: Invalid chunk size" in answer


def test_a_chunked_body_over_the_limit_is_a_413_and_one_at_it_is_linked(dictionary_server: Server) -> None:
    port = dictionary_server.port
    answer = raw_exchange(port, _chunked(_d2kb_body_of_size(LIMIT + 1)))
    assert _status(answer) == 413 and f"over the limit of {LIMIT} bytes".encode() in answer
    answer = raw_exchange(port, _chunked(_d2kb_body_of_size(LIMIT)))
    assert _status(answer) == 200 and b"http://dbpedia.org/resource/Paris" in answer


def test_two_stalled_bodies_stall_nothing_and_get_a_408(dictionary_server: Server) -> None:
    url, port, _ = dictionary_server
    body = gerbil_request("Paris")
    head = (f"POST /gerbil HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-turtle\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    stalled = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
    try:
        for connection in stalled:
            connection.sendall(head + body[:len(body) // 2])
        stalled_at = time.monotonic()
        time.sleep(0.5)  # both are being read by request threads now
        assert _timed_health(url) < 1
        started = time.monotonic()
        assert _post(url, gerbil_request("Paris"), timeout=10)[0] == 200
        assert time.monotonic() - started < 1
        time.sleep(max(0.0, stalled_at + BODY_TIMEOUT_S + 0.3 - time.monotonic()))
        assert _timed_health(url) < 1  # also while their connections are being closed
        for connection in stalled:
            answer = b""
            while chunk := connection.recv(65536):  # the connection closes after the answer
                answer += chunk
            assert _status(answer) == 408 and b"nothing received for 2 s (ENTQA_BODY_TIMEOUT)" in answer
    finally:
        for connection in stalled:
            connection.close()


def test_health_is_answered_while_documents_queue(slow_server: Server) -> None:
    url, _, _ = slow_server
    with ThreadPoolExecutor(4) as clients:
        answers = [clients.submit(_post, url, gerbil_request(f"Paris {i}")) for i in range(4)]
        time.sleep(0.3)
        assert _timed_health(url) < 1
        assert [answer.result()[0] for answer in answers] == [200] * 4


def test_documents_of_clients_that_went_away_are_dropped(slow_server: Server) -> None:
    url, port, _ = slow_server
    body = gerbil_request("Paris")
    head = (f"POST /gerbil HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-turtle\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    for _ in range(6):
        with socket.create_connection(("127.0.0.1", port)) as connection:
            connection.sendall(head + body)
    time.sleep(0.1)
    started = time.monotonic()
    assert _post(url, body)[0] == 200
    # Linked all seven, it would take 7 x 1.5 s; the vanished clients' documents are stopped or never started.
    assert time.monotonic() - started < 2 * LINK_S + 0.5


def test_a_document_past_the_deadline_is_a_503_with_its_reason() -> None:
    with gunicorn_serving("tests.support.wsgi_slow_app:app", env={"SLOW_LINKER_SECONDS": "30",
                                                              "ENTQA_DOCUMENT_TIMEOUT": "1"}) as (url, _, _):
        started = time.monotonic()
        status, answer = _post(url, gerbil_request("Paris"))
        assert (status, answer) == (503, b"document dropped: took longer than the limit of 1 s\n")
        assert time.monotonic() - started < 3
        assert _timed_health(url) < 1


def test_json_and_batch_documents_of_clients_that_went_away_are_dropped(slow_server: Server) -> None:
    url, port, _ = slow_server
    single = json.dumps({"text": "Paris"}).encode()
    batch = json.dumps({"documents": [{"text": "Paris"}, {"text": "London"}, {"text": "Paris"}]}).encode()
    for path, body in [("/api/link", single)] * 4 + [("/api/link/batch", batch)]:
        with socket.create_connection(("127.0.0.1", port)) as connection:
            connection.sendall((f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
    time.sleep(0.1)
    started = time.monotonic()
    assert _post(url, gerbil_request("Paris"))[0] == 200
    # Linked all eight, it would take 8 x 1.5 s; the vanished clients' documents are stopped or never started.
    assert time.monotonic() - started < 2 * LINK_S + 0.5
