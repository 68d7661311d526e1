"""Tests of nif.write: GERBIL's answer shape and parse → write → parse round trips."""
from __future__ import annotations

import pytest
from rdflib import RDF, Literal, URIRef

from nif import NifAnnotation, NifDocument, documents_in, load_graph, parse_document, write_document
from nif.vocabulary import ITSRDF, NIF
from tests.support.gerbil_requests import REQUEST_BASE, TRICKY_TEXT, span_of
from tests.support.rdf_readers import READERS, Reading, ReaderUnavailable, as_rapper_reads

XSD_STRING = URIRef("http://www.w3.org/2001/XMLSchema#string")
XSD_NON_NEGATIVE = URIRef("http://www.w3.org/2001/XMLSchema#nonNegativeInteger")
XSD_DOUBLE = URIRef("http://www.w3.org/2001/XMLSchema#double")
CONTEXT = f"{REQUEST_BASE}#char=0,{len(TRICKY_TEXT)}"
ZURICH = span_of(TRICKY_TEXT, "Zürich")
PARIS = span_of(TRICKY_TEXT, "Paris")
DOC = NifDocument(CONTEXT, TRICKY_TEXT, (
    NifAnnotation(*ZURICH, ("http://dbpedia.org/resource/Zürich",), 0.25),
    NifAnnotation(*PARIS, ("http://dbpedia.org/resource/Paris", "http://en.wikipedia.org/wiki/Paris"), 0.5)))


def test_round_trip_without_confidence_drops_only_the_confidence() -> None:
    expected = NifDocument(DOC.uri, DOC.text, tuple(NifAnnotation(a.start, a.end, a.uris) for a in DOC.annotations))
    assert parse_document(write_document(DOC)) == expected


def test_round_trip_with_confidence_is_identical() -> None:
    assert parse_document(write_document(DOC, with_confidence=True)) == DOC


@pytest.mark.parametrize("text", ["London", "", "a\u00a0b\r\nc\td 😀🚀 \"quoted\" \\ back\"\"\"", "\U0001F600"])
def test_round_trip_of_awkward_texts(text: str) -> None:
    annotations = (NifAnnotation(0, len(text), ("http://dbpedia.org/resource/London",)),) if text else ()
    doc = NifDocument(f"http://e.org/doc#char=0,{len(text)}", text, annotations)
    assert parse_document(write_document(doc)) == doc


def test_context_and_phrase_nodes_have_gerbil_types_and_datatypes() -> None:
    graph = load_graph(write_document(DOC, with_confidence=True))
    context, phrase = URIRef(CONTEXT), URIRef(f"{REQUEST_BASE}#char={PARIS[0]},{PARIS[1]}")
    assert set(graph.objects(context, RDF.type)) == {NIF.Context, NIF.String, NIF.RFC5147String}
    assert set(graph.objects(phrase, RDF.type)) == {NIF.Phrase, NIF.String, NIF.RFC5147String}
    assert graph.value(context, NIF.isString) == Literal(TRICKY_TEXT, datatype=XSD_STRING)
    assert graph.value(context, NIF.endIndex) == Literal(len(TRICKY_TEXT), datatype=XSD_NON_NEGATIVE)
    assert graph.value(phrase, NIF.beginIndex) == Literal(PARIS[0], datatype=XSD_NON_NEGATIVE)
    assert graph.value(phrase, NIF.anchorOf) == Literal("Paris", datatype=XSD_STRING)
    assert graph.value(phrase, NIF.referenceContext) == context
    assert graph.value(phrase, ITSRDF.taConfidence).datatype == XSD_DOUBLE
    assert len(list(graph.objects(phrase, ITSRDF.taIdentRef))) == 2


def test_offsets_count_code_points_after_astral_characters() -> None:
    text = "😀😀 Paris"
    doc = NifDocument("http://e.org/d#char=0,8", text, (NifAnnotation(3, 8, ("http://dbpedia.org/resource/Paris",)),))
    graph = load_graph(write_document(doc))
    assert graph.value(URIRef("http://e.org/d#char=3,8"), NIF.anchorOf) == Literal("Paris", datatype=XSD_STRING)


def test_documents_in_reads_back_a_written_corpus() -> None:
    assert documents_in(load_graph(write_document(DOC))) == [parse_document(write_document(DOC))]


@pytest.mark.parametrize("annotations", [
    (NifAnnotation(0, 2), NifAnnotation(0, 2, ("http://e.org/x",))),
    (NifAnnotation(0, 99),),
])
def test_repeated_or_out_of_range_spans_are_rejected(annotations: tuple[NifAnnotation, ...]) -> None:
    with pytest.raises(ValueError, match="repeated or outside"):
        write_document(NifDocument("http://e.org/d", "Paris", annotations))


@pytest.mark.parametrize("reader", ["rdflib", "oxigraph", "rapper"])
@pytest.mark.parametrize("text", ['a\nb\\"', 'ends in """', "\x00\x01\x1f\x7f\u0085\u2028\ufeff\uffff", "\\u0041 \\"])
def test_strict_readers_read_back_the_exact_text(reader: str, text: str) -> None:
    uri = "http://dbpedia.org/resource/London"
    doc = NifDocument("http://e.org/d", text, (NifAnnotation(0, len(text), (uri,)),))
    try:
        reading = READERS[reader](write_document(doc).encode())
    except ReaderUnavailable as error:
        pytest.skip(str(error))
    expected = as_rapper_reads(text) if reader == "rapper" else text
    assert reading == Reading(expected, frozenset({(0, len(text), (uri,))}))


@pytest.mark.parametrize("uri", ["http://e.org/a b", "http://e.org/a\x00b", "http://e.org/a\nb", "http://e.org/{x}",
                                 "relative", "http://e.org/a>b"])
def test_iris_strict_readers_refuse_are_not_written(uri: str) -> None:
    with pytest.raises(ValueError, match="is not an absolute IRI"):
        write_document(NifDocument(uri, "Paris"))
    with pytest.raises(ValueError, match="is not an absolute IRI"):
        write_document(NifDocument("http://e.org/d", "Paris", (NifAnnotation(0, 5, (uri,)),)))


@pytest.mark.parametrize(("confidence", "lexical"), [(0.25, "0.25"), (1e-05, "1e-05"), (float("inf"), "INF"),
                                                     (float("-inf"), "-INF"), (float("nan"), "NaN")])
def test_confidences_are_written_in_xml_schema_lexical_forms(confidence: float, lexical: str) -> None:
    doc = NifDocument("http://e.org/d", "Paris", (NifAnnotation(0, 5, (), confidence),))
    assert f'itsrdf:taConfidence "{lexical}"^^xsd:double' in write_document(doc, with_confidence=True)
