"""Write a `NifDocument` as NIF 2.0 Turtle in the shape GERBIL's own writer uses."""
from __future__ import annotations

from rdflib import RDF, XSD, Graph, Literal, URIRef

from nif.data_types import NifDocument
from nif.vocabulary import ITSRDF, NIF


def write_document(doc: NifDocument, *, with_confidence: bool = False) -> str:
    """Serialises one document and its annotations as Turtle.

    The context keeps `doc.uri` and the exact `doc.text`, because GERBIL maps the offsets onto the
    string it gets back. Each annotation becomes `<base#char=start,end>` (base: `doc.uri` without its
    fragment); offsets are code points.

    Args:
        doc: the document; no two annotations may share a span.
        with_confidence: also write each annotation's confidence as `itsrdf:taConfidence`.

    Returns:
        The Turtle text.

    Raises:
        ValueError: two annotations share a span, or a span lies outside the text.
    """
    graph = Graph()
    graph.bind("nif", NIF)
    graph.bind("itsrdf", ITSRDF)
    context = URIRef(doc.uri)
    _add_string(graph, context, NIF.Context, 0, len(doc.text))
    graph.add((context, NIF.isString, Literal(doc.text, datatype=XSD.string)))
    base = doc.uri.split("#", 1)[0]
    spans = set()
    for annotation in doc.annotations:
        span = (annotation.start, annotation.end)
        if span in spans or not 0 <= annotation.start <= annotation.end <= len(doc.text):
            raise ValueError(f"annotation span {span} is repeated or outside a text of length {len(doc.text)}")
        spans.add(span)
        node = URIRef(f"{base}#char={annotation.start},{annotation.end}")
        _add_string(graph, node, NIF.Phrase, annotation.start, annotation.end)
        graph.add((node, NIF.anchorOf, Literal(doc.text[annotation.start:annotation.end], datatype=XSD.string)))
        graph.add((node, NIF.referenceContext, context))
        for uri in annotation.uris:
            graph.add((node, ITSRDF.taIdentRef, URIRef(uri)))
        if with_confidence and annotation.confidence is not None:
            graph.add((node, ITSRDF.taConfidence, Literal(annotation.confidence, datatype=XSD.double)))
    return graph.serialize(format="turtle")


def _add_string(graph: Graph, node: URIRef, kind: URIRef, start: int, end: int) -> None:
    for type_ in (kind, NIF.String, NIF.RFC5147String):
        graph.add((node, RDF.type, type_))
    graph.add((node, NIF.beginIndex, Literal(start, datatype=XSD.nonNegativeInteger)))
    graph.add((node, NIF.endIndex, Literal(end, datatype=XSD.nonNegativeInteger)))
