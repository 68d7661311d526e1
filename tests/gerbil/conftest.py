"""Shared fixtures for the gerbil tests: the resource folder and a loopback NIF stub server."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from nif import parse_document, write_document
from nif.data_types import NifAnnotation, NifDocument
from tests.support.dictionary_linker import DictionaryLinker

# (request body) -> (status, response body)
Responder = Callable[[bytes], tuple[int, bytes]]


@pytest.fixture
def resources() -> Path:
    return Path(__file__).resolve().parents[1] / "resources" / "gerbil"


def linking_responder(body: bytes) -> tuple[int, bytes]:
    """Answers like a NIF annotator backed by the dictionary linker (A2KB or D2KB by the spans sent)."""
    request = parse_document(body)
    spans = [(a.start, a.end) for a in request.annotations] or None
    mentions = DictionaryLinker().link(request.text, spans)
    answer = NifDocument(request.uri, request.text,
                         tuple(NifAnnotation(m.start, m.end, (m.uri,), m.score) for m in mentions))
    return 200, write_document(answer, with_confidence=True).encode("utf-8")


@dataclass
class StubServer:
    """A NIF annotator on 127.0.0.1 that records what it receives."""

    url: str
    respond: Responder
    requests: list[tuple[dict[str, str], bytes]] = field(default_factory=list)


@pytest.fixture
def stub_server() -> Iterator[StubServer]:
    stub = StubServer("", linking_responder)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = self.rfile.read(int(self.headers["Content-Length"]))
            stub.requests.append((dict(self.headers.items()), body))
            status, answer = stub.respond(body)
            self.send_response(status)
            self.send_header("Content-Type", "application/x-turtle; charset=utf-8")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            try:
                self.wfile.write(answer)
            except BrokenPipeError:  # the timeout test's client has given up already
                pass

        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    stub.url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
