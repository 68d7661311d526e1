"""Tests of nif.parse: GERBIL requests and answers, and corpora in the shapes found in the wild."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from nif import NifAnnotation, NifDocument, NifParseError, documents_in, load_graph, parse_document
from tests.support.gerbil_requests import REQUEST_BASE, TRICKY_TEXT, gerbil_request, span_of

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
PREFIX = "@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> .\n"


def test_a2kb_request_has_the_exact_text_and_no_annotations() -> None:
    doc = parse_document(gerbil_request(TRICKY_TEXT))
    assert doc == NifDocument(f"{REQUEST_BASE}#char=0,{len(TRICKY_TEXT)}", TRICKY_TEXT, ())


def test_d2kb_request_gives_bare_spans_in_code_points() -> None:
    spans = [span_of(TRICKY_TEXT, "Paris"), span_of(TRICKY_TEXT, "東京"), span_of(TRICKY_TEXT, "Ada Lovelace")]
    doc = parse_document(gerbil_request(TRICKY_TEXT, spans))
    assert [(a.start, a.end) for a in doc.annotations] == sorted(spans)
    assert all(a.uris == () and a.confidence is None for a in doc.annotations)
    assert [doc.text[a.start:a.end] for a in doc.annotations] == ["東京", "Paris", "Ada Lovelace"]


def test_wild_corpus_documents_in_natural_uri_order() -> None:
    docs = documents_in(load_graph((RESOURCES / "wild_corpus.ttl").read_bytes()))
    assert [doc.uri for doc in docs] == ["http://example.org/corpus/doc2#char=0,", "http://example.org/corpus/doc10"]
    assert docs[0].annotations == (NifAnnotation(7, 9),)
    assert docs[0].text[7:9] == "東京"


def test_wild_corpus_tolerates_types_indexes_language_tags_and_several_uris(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="nif.parse"):
        doc = documents_in(load_graph((RESOURCES / "wild_corpus.ttl").read_bytes()))[1]
    assert doc.text == "Grüße aus Zürich 😀 und\tParis."
    assert doc.annotations == (
        NifAnnotation(10, 16, ("http://dbpedia.org/page/Zürich", "http://dbpedia.org/resource/Zürich"), 0.75),
        NifAnnotation(23, 28, ("http://dbpedia.org/page/Paris",)))
    assert "lacks nif:beginIndex or nif:endIndex" in caplog.text


def test_first_context_is_used_when_there_are_several(caplog: pytest.LogCaptureFixture) -> None:
    data = gerbil_request("Paris", base="http://e.org/doc_10") + gerbil_request("London", base="http://e.org/doc_9")
    with caplog.at_level(logging.WARNING, logger="nif.parse"):
        assert parse_document(data).text == "London"
    assert "2 contexts" in caplog.text


def test_strings_accept_str_and_other_rdf_formats() -> None:
    ntriples = ('<http://e.org/d> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> '
                '<http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#Context> .\n'
                '<http://e.org/d> <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#isString> "Paris" .\n')
    assert parse_document(ntriples, format="nt") == NifDocument("http://e.org/d", "Paris")


@pytest.mark.parametrize(("data", "message"), [
    (b"<a> <b> .", "malformed turtle"),
    (b"\xff\xfe<a>", "not valid UTF-8"),
    (b"", "no nif:Context in the input"),
    ((PREFIX + "<http://e.org/d> a nif:Context .").encode(), "no nif:Context with nif:isString"),
    ((PREFIX + '<http://e.org/d> a nif:Context ; nif:isString "a" , "b" .').encode(), "2 nif:isString values"),
    ((PREFIX + '<http://e.org/d> a nif:Context ; nif:isString "abc" . <http://e.org/d#x> nif:referenceContext '
      '<http://e.org/d> ; nif:beginIndex 1 ; nif:endIndex 9 .').encode(), "outside a text of length 3"),
    ((PREFIX + '<http://e.org/d> a nif:Context ; nif:isString "abc" . <http://e.org/d#x> nif:referenceContext '
      '<http://e.org/d> ; nif:beginIndex "one" ; nif:endIndex 2 .').encode(), "non-integer nif:beginIndex"),
])
def test_bad_input_raises_a_one_line_parse_error(data: bytes, message: str) -> None:
    with pytest.raises(NifParseError, match=message) as caught:
        parse_document(data)
    assert "\n" not in str(caught.value)
