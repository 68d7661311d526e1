"""Tests of nif.parse: GERBIL requests and answers, and corpora in the shapes found in the wild."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from nif import NifAnnotation, NifDocument, NifParseError, documents_in, load_graph, parse_document
from tests.support.gerbil_requests import REQUEST_BASE, TRICKY_TEXT, gerbil_request, span_of

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
PREFIX = "@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> .\n"
XSD_PREFIX = "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"


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


def test_several_contexts_are_refused_not_answered_in_part() -> None:
    data = gerbil_request("Paris", base="http://e.org/doc_10") + gerbil_request("London", base="http://e.org/doc_9")
    with pytest.raises(NifParseError, match="2 nif:Contexts with nif:isString .*expected one document"):
        parse_document(data)


def test_a_utf8_byte_order_mark_is_skipped() -> None:
    assert parse_document(b"\xef\xbb\xbf" + gerbil_request("Paris")).text == "Paris"
    assert parse_document("\ufeff" + gerbil_request("Paris").decode()).text == "Paris"


@pytest.mark.parametrize(("literal", "text"), [
    ('"01"^^xsd:integer', "01"), ('"TRUE"^^xsd:boolean', "TRUE"), ('"1E1"^^xsd:double', "1E1"),
    ('"2020-01-01T00:00:00.000Z"^^xsd:dateTime', "2020-01-01T00:00:00.000Z"), ('"Paris"@EN', "Paris"),
    ('"a  b"^^<http://e.org/type>', "a  b"),
])
def test_texts_of_any_type_keep_their_lexical_form(literal: str, text: str) -> None:
    data = PREFIX + XSD_PREFIX + f"<http://e.org/d> a nif:Context ; nif:isString {literal} ."
    assert parse_document(data).text == text


def test_escaped_surrogate_pairs_are_one_character_and_offsets_count_it_once() -> None:
    data = PREFIX + (r'<http://e.org/d\uD83D\uDE00> a nif:Context ; nif:isString "\uD83D\uDE00 Paris" . '
                     r'<http://e.org/d#p> nif:referenceContext <http://e.org/d\uD83D\uDE00> ; '
                     "nif:beginIndex 2 ; nif:endIndex 7 .")
    doc = parse_document(data)
    assert (doc.uri, doc.text, doc.annotations) == ("http://e.org/d😀", "😀 Paris", (NifAnnotation(2, 7),))


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
    ((PREFIX + r'<http://e.org/d> a nif:Context ; nif:isString "Paris \uD83D" .').encode(),
     "isString of http://e.org/d holds a lone UTF-16 surrogate U\\+D83D at character 6"),
    ((PREFIX + r'<http://e.org/d> a nif:Context ; nif:isString "\uDE00\uD83D" .').encode(),
     "lone UTF-16 surrogate U\\+DE00"),
    ((PREFIX + r'<http://e.org/d\uDE00> a nif:Context ; nif:isString "x" .').encode(), "context IRI holds a lone"),
    ((PREFIX + '<http://e.org/d> a nif:Context ; nif:isString <http://e.org/text> .').encode(), "not a literal"),
    ((PREFIX + XSD_PREFIX + '<http://e.org/d> a nif:Context ; nif:isString "a\tb"^^xsd:token .').encode(),
     "typed http://www.w3.org/2001/XMLSchema#token, whose whitespace the parser would rewrite"),
])
def test_bad_input_raises_a_one_line_parse_error(data: bytes, message: str) -> None:
    with pytest.raises(NifParseError, match=message) as caught:
        parse_document(data)
    assert "\n" not in str(caught.value)


def test_a_relative_context_iri_is_refused_and_never_resolved_against_the_server_folder() -> None:
    body = ('<d> a <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#Context> ; '
            '<http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#isString> "Paris" .')
    with pytest.raises(NifParseError, match="context IRI <d> is relative") as caught:
        parse_document(body)
    assert "file:" not in str(caught.value)
