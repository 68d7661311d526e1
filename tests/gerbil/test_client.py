"""The HTTP client sends what GERBIL sends and reads answers as GERBIL does; the in-process client."""
from __future__ import annotations

import socket
import time
from collections.abc import Sequence

import pytest

from annotator.data_types import Mention
from annotator.uris import dbpedia_uri
from gerbil.client import HttpAnnotator, InProcessAnnotator, Task, reduce_document
from nif import parse_document
from nif.data_types import NifAnnotation, NifDocument
from tests.gerbil.conftest import StubServer
from tests.support.dictionary_linker import DictionaryLinker
from annotator.service import create_app

TEXT = "Ada Lovelace worked with Babbage in London."
GOLD = NifDocument("http://example.org/doc/1#char=0,43", TEXT, (
    NifAnnotation(0, 12, ("http://dbpedia.org/resource/Ada_Lovelace",)),
    NifAnnotation(25, 32, ("http://dbpedia.org/resource/Charles_Babbage",)),
    NifAnnotation(36, 42, ("http://dbpedia.org/resource/Nowhere",)),
))


def test_reduce_document_hides_what_the_task_hides() -> None:
    a2kb = reduce_document(GOLD, task=Task.A2KB)
    assert a2kb.annotations == () and a2kb.text == TEXT
    d2kb = reduce_document(GOLD, task=Task.D2KB, uri="http://x/request_7")
    assert d2kb.uri == "http://x/request_7#char=0,43"
    assert d2kb.annotations == (NifAnnotation(0, 12), NifAnnotation(25, 32), NifAnnotation(36, 42))


def test_requests_are_rewritten_numbered_and_carry_gerbil_headers(stub_server: StubServer) -> None:
    annotator = HttpAnnotator(stub_server.url, headers={"X-Api-Key": "k"})
    annotator.annotate(GOLD, task=Task.A2KB)
    annotator.annotate(GOLD, task=Task.D2KB)
    (headers0, body0), (headers1, body1) = stub_server.requests
    assert headers0["Content-Type"] == "application/x-turtle;charset=UTF-8"
    assert headers0["Accept"] == "application/x-turtle"
    assert headers0["Accept-Charset"] == "UTF-8"
    assert headers0["X-Api-Key"] == "k"
    first, second = parse_document(body0), parse_document(body1)
    assert first.uri == "http://www.aksw.org/gerbil/NifWebService/request_0#char=0,43"
    assert second.uri == "http://www.aksw.org/gerbil/NifWebService/request_1#char=0,43"
    assert first.text == second.text == TEXT
    assert first.annotations == ()
    assert [(a.start, a.end, a.uris) for a in second.annotations] == [(0, 12, ()), (25, 32, ()), (36, 42, ())]


def test_answer_parsed_with_confidences_and_latency(stub_server: StubServer) -> None:
    answer = HttpAnnotator(stub_server.url).annotate(GOLD, task=Task.A2KB)
    assert answer.error is None and answer.latency_s > 0
    assert [(a.start, a.end, a.uris[0].rsplit("/", 1)[1]) for a in answer.annotations] == [
        (0, 12, "Ada_Lovelace"), (25, 32, "Charles_Babbage"), (36, 42, "London")]


def test_http_error_is_an_empty_answer_with_the_reason(stub_server: StubServer) -> None:
    stub_server.respond = lambda body: (500, b"boom")
    answer = HttpAnnotator(stub_server.url).annotate(GOLD, task=Task.A2KB)
    assert answer.annotations == () and answer.error is not None and "500" in answer.error


def test_unparseable_answer_is_an_empty_answer(stub_server: StubServer) -> None:
    stub_server.respond = lambda body: (200, b"<a> <b> <c>")  # "Triples not terminated by DOT"
    answer = HttpAnnotator(stub_server.url).annotate(GOLD, task=Task.A2KB)
    assert answer.annotations == () and "NifParseError" in (answer.error or "")


def test_answer_without_is_string_is_an_empty_answer(stub_server: StubServer) -> None:
    stub_server.respond = lambda body: (200, b"@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/"
                                             b"ontologies/nif-core#> . <http://x/c> a nif:Context .")
    answer = HttpAnnotator(stub_server.url).annotate(GOLD, task=Task.A2KB)
    assert answer.annotations == () and answer.error is not None


def test_timeout_is_an_empty_answer(stub_server: StubServer) -> None:
    def slow(body: bytes) -> tuple[int, bytes]:
        time.sleep(0.5)
        return 200, b""

    stub_server.respond = slow
    answer = HttpAnnotator(stub_server.url, timeout_s=0.1).annotate(GOLD, task=Task.A2KB)
    assert answer.annotations == () and answer.error is not None
    assert 0.05 < answer.latency_s < 0.5


def test_connection_refused_is_an_empty_answer() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    answer = HttpAnnotator(f"http://127.0.0.1:{port}/", timeout_s=2).annotate(GOLD, task=Task.A2KB)
    assert answer.annotations == () and answer.error is not None


def test_in_process_a2kb_and_d2kb() -> None:
    annotator = InProcessAnnotator(DictionaryLinker())
    a2kb = annotator.annotate(GOLD, task=Task.A2KB)
    assert [(a.start, a.end) for a in a2kb.annotations] == [(0, 12), (25, 32), (36, 42)]
    assert all(a.confidence is None for a in a2kb.annotations)
    spans_only = NifDocument(GOLD.uri, TEXT, (NifAnnotation(25, 32, ("http://x",)),))
    d2kb = InProcessAnnotator(DictionaryLinker(), with_confidence=True).annotate(spans_only, task=Task.D2KB)
    assert [(a.start, a.end, a.confidence) for a in d2kb.annotations] == [(25, 32, 0.9)]


def test_in_process_failure_is_an_empty_answer() -> None:
    class Broken(DictionaryLinker):
        def link(self, text: str, spans: object = None) -> list:  # type: ignore[override]
            raise RuntimeError("out of memory")

    answer = InProcessAnnotator(Broken()).annotate(GOLD, task=Task.A2KB)
    assert answer.annotations == () and answer.error == "RuntimeError: out of memory"


class TwoReadingsLinker(DictionaryLinker):
    """The dictionary's mentions, plus a less likely second entity on "Babbage"'s span (as `merge="paper"` gives)."""

    def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
        mentions = super().link(text, spans)
        start = text.index("Babbage")
        if spans is None or (start, start + 7) in spans:
            mentions.append(Mention(start, start + 7, "Babbage", "Babbage (crater)", dbpedia_uri("Babbage (crater)"),
                                    0.4))
        return mentions


@pytest.mark.parametrize("with_confidence", [False, True])
@pytest.mark.parametrize("task", [Task.A2KB, Task.D2KB])
def test_http_and_in_process_answers_are_the_same_annotations(stub_server: StubServer, task: Task,
                                                              with_confidence: bool) -> None:
    client = create_app({"TESTING": True, "WITH_CONFIDENCE": with_confidence}, linker=TwoReadingsLinker()).test_client()

    def web_service(body: bytes) -> tuple[int, bytes]:
        response = client.post("/", data=body, content_type="application/x-turtle")
        return response.status_code, response.data

    stub_server.respond = web_service
    over_http = HttpAnnotator(stub_server.url).annotate(GOLD, task=task)
    in_process = InProcessAnnotator(TwoReadingsLinker(), with_confidence=with_confidence).annotate(GOLD, task=task)
    assert over_http.error is None and in_process.error is None
    # RDF keeps no order among a node's URIs; GERBIL reads them as a set
    assert [(a.start, a.end, frozenset(a.uris), a.confidence) for a in over_http.annotations] == [
        (a.start, a.end, frozenset(a.uris), a.confidence) for a in in_process.annotations]
    babbage = next(a for a in in_process.annotations if a.start == 25)
    assert babbage.uris == (dbpedia_uri("Charles Babbage"), dbpedia_uri("Babbage (crater)"))
