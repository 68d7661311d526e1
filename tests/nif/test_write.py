"""Tests of nif.write: GERBIL's answer shape and parse → write → parse round trips."""
from __future__ import annotations

import pytest
from rdflib import RDF, Literal, URIRef

from nif import NifAnnotation, NifDocument, documents_in, load_graph, parse_document, write_document
from nif.vocabulary import ITSRDF, NIF
from tests.support.gerbil_requests import REQUEST_BASE, TRICKY_TEXT, span_of

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
