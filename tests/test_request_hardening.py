"""Requests that used to get a 500 or a wrong 200 (issue 47): each now gets a 400 that says why, or a true answer."""
from __future__ import annotations

import logging

import pyoxigraph
import pytest
from flask.testing import FlaskClient

from nif import NifAnnotation, parse_document
from tests.support.dictionary_linker import DictionaryLinker
from tests.support.gerbil_requests import HEADERS, gerbil_request
from annotator.service import create_app

N = "http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core"
XSD = "http://www.w3.org/2001/XMLSchema#"
PARIS = "http://dbpedia.org/resource/Paris"


@pytest.fixture(scope="module")
def client() -> FlaskClient:
    return create_app({"TESTING": True}, linker=DictionaryLinker()).test_client()


def context(iri: str, text: str = '"Paris"') -> str:
    return f"{iri} a <{N}#Context> ; <{N}#isString> {text} .\n"


def span(context_iri: str, begin: int, end: int) -> str:
    return f"_:p <{N}#referenceContext> {context_iri} ; <{N}#beginIndex> {begin} ; <{N}#endIndex> {end} .\n"


@pytest.mark.parametrize(("body", "reason"), [
    (context("<http://x/d>") + span("<http://x/d>", 2, 2),
     "bad NIF: the D2KB span 2,2 is empty; expected nif:beginIndex < nif:endIndex"),
    *[(context(f"<http://x/a{escape}b>"), "bad NIF: the context cannot be answered: 'http://x/a")
      for escape in [r"\u0020", r"\u003E", r"\u0022", r"\u007B", r"\u005C", r"\u005E", r"\u0060", r"\u007C",
                     r"\u0000", r"\u000A", " ", "\n"]],
    (context("<http://x/a\\u0020b>"), "is not an absolute IRI (Invalid IRI code point ' ')"),
    (context("<http://x/d>", r'"Paris \uD83D"'), "lone UTF-16 surrogate U+D83D at character 6"),
    (context("<http://x/d1>") + context("<http://x/d2>"), "bad NIF: 2 nif:Contexts with nif:isString"),
])
def test_requests_that_cannot_be_answered_get_a_400_that_says_why(client: FlaskClient, body: str, reason: str) -> None:
    response = client.post("/", data=body.encode(), headers=HEADERS)
    assert response.status_code == 400
    text = response.get_data(as_text=True)
    assert reason in text and text.count("\n") == 1


def test_a_context_range_that_disagrees_with_its_text_is_refused(client: FlaskClient) -> None:
    # the answer names each phrase by the context's base and range: "#char=0,5" would name "Paris" as the context
    body = context("<http://x/request_0#char=0,5>", '"Paris Hilton"')
    response = client.post("/", data=body.encode(), headers=HEADERS)
    assert response.status_code == 400
    assert response.get_data(as_text=True) == ("bad NIF: the context IRI's range #char=0,5 disagrees with its text "
                                               "of 12 characters; expected #char=0,12\n")
    agreeing = client.post("/", data=context("<http://x/request_0#char=0,12>", '"Paris Hilton"').encode(),
                           headers=HEADERS)
    assert agreeing.status_code == 200


def test_a_reason_never_carries_a_control_character(client: FlaskClient) -> None:
    response = client.post("/", data=context(r"<http://x/a\u0000b>").encode(), headers=HEADERS)
    assert response.status_code == 400
    text = response.get_data(as_text=True)
    assert "\x00" not in text and "\\x00" in text and text.count("\n") == 1
    assert all(c.isprintable() for c in text.rstrip("\n"))


def test_the_415_reason_is_short_and_names_the_accepted_types(client: FlaskClient) -> None:
    response = client.post("/", data=gerbil_request("Paris"), headers={"Content-Type": "text/html; x=" + "y" * 6000})
    assert response.status_code == 415
    text = response.get_data(as_text=True)
    assert text.startswith("unsupported content type, expected application/x-turtle or text/turtle in UTF-8: ")
    assert len(text) < 200


def test_a_byte_order_mark_before_the_turtle_is_accepted(client: FlaskClient) -> None:
    response = client.post("/", data=b"\xef\xbb\xbf" + gerbil_request("Paris"), headers=HEADERS)
    assert response.status_code == 200
    assert parse_document(response.data).annotations == (NifAnnotation(0, 5, (PARIS,)),)


def test_an_escaped_surrogate_pair_is_one_character_in_the_text_and_the_offsets(client: FlaskClient) -> None:
    body = context("<http://x/d>", r'"\uD83D\uDE00 Paris"') + span("<http://x/d>", 2, 7)
    response = client.post("/", data=body.encode(), headers=HEADERS)
    assert response.status_code == 200
    answer = parse_document(response.data)
    assert (answer.text, answer.annotations) == ("😀 Paris", (NifAnnotation(2, 7, (PARIS,)),))


@pytest.mark.parametrize("literal", ['"01"^^<{xsd}integer>', '"TRUE"^^<{xsd}boolean>', '"1E1"^^<{xsd}double>',
                                     '"2020-01-01T00:00:00.000Z"^^<{xsd}dateTime>', '"Paris"@en'])
def test_the_answer_carries_the_text_as_sent_as_an_xsd_string(client: FlaskClient, literal: str) -> None:
    literal = literal.format(xsd=XSD)
    response = client.post("/", data=context("<http://x/d>", literal).encode(), headers=HEADERS)
    assert response.status_code == 200
    (text,) = [quad.object for quad in pyoxigraph.parse(response.data, format=pyoxigraph.RdfFormat.TURTLE)
               if quad.predicate.value == f"{N}#isString"]
    assert text == pyoxigraph.Literal(literal[1:literal.rindex('"')], datatype=pyoxigraph.NamedNode(XSD + "string"))


def test_every_answer_carries_a_request_id_and_the_log_lines_name_it(client: FlaskClient,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    given = client.post("/", data=gerbil_request("Paris"), headers={**HEADERS, "X-Request-Id": "gerbil-42"})
    assert given.headers["X-Request-Id"] == "gerbil-42"
    made = client.post("/api/link", json={"text": "Paris"})
    assert len(made.headers["X-Request-Id"]) == 32  # a new one
    odd = client.post("/api/link", json={"text": "Paris"}, headers={"X-Request-Id": "two words\u0000"})
    assert odd.headers["X-Request-Id"] != "two words\u0000" and len(odd.headers["X-Request-Id"]) == 32
    assert client.get("/health/live").headers["X-Request-Id"] != made.headers["X-Request-Id"]
    with caplog.at_level(logging.ERROR, logger="annotator.service.errors"):
        broken = create_app({"TESTING": True}, linker=FailingLinker()).test_client()
        failed = broken.post("/api/link", json={"text": "Paris"}, headers={"X-Request-Id": "req-7"})
    assert failed.status_code == 500 and failed.headers["X-Request-Id"] == "req-7"
    assert [record.request_id for record in caplog.records] == ["req-7"]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="annotator.service"):
        logging.getLogger("annotator.service").info("outside any request")
    assert [record.request_id for record in caplog.records] == ["-"]


class FailingLinker(DictionaryLinker):
    def link(self, text: str, spans=None):  # type: ignore[no-untyped-def]
        raise RuntimeError("the model broke")
