"""Write a `NifDocument` as NIF 2.0 Turtle in the shape GERBIL's own writer uses."""
from __future__ import annotations

from collections.abc import Sequence

from nif import turtle
from nif.data_types import NifDocument
from nif.vocabulary import ITSRDF, NIF

_PREFIXES = (f"@prefix nif: <{NIF}> .\n@prefix itsrdf: <{ITSRDF}> .\n"
             "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n")


def write_document(doc: NifDocument, *, with_confidence: bool = False) -> str:
    """Serialises one document and its annotations as Turtle that rdflib, Oxigraph and rapper all read.

    The context keeps `doc.uri` and the exact `doc.text` (as an xsd:string, whatever type the request gave
    it), because GERBIL maps the offsets onto the string it gets back. Each annotation becomes
    `<base#char=start,end>` (base: `doc.uri` without its fragment); offsets are code points.

    Args:
        doc: the document; no two annotations may share a span.
        with_confidence: also write each annotation's confidence as `itsrdf:taConfidence`.

    Returns:
        The Turtle text.

    Raises:
        ValueError: two annotations share a span, a span lies outside the text, or an IRI is not an
            absolute IRI (see `turtle.check_iri`).
    """
    context = turtle.iri(doc.uri)
    base = doc.uri.split("#", 1)[0]
    nodes = [_node(context, "nif:Context", 0, len(doc.text), [("nif:isString", _xsd_string(doc.text))])]
    spans = set()
    for annotation in doc.annotations:
        span = (annotation.start, annotation.end)
        if span in spans or not 0 <= annotation.start <= annotation.end <= len(doc.text):
            raise ValueError(f"annotation span {span} is repeated or outside a text of length {len(doc.text)}")
        spans.add(span)
        properties = [("nif:anchorOf", _xsd_string(doc.text[annotation.start:annotation.end])),
                      ("nif:referenceContext", context)]
        if annotation.uris:
            properties.append(("itsrdf:taIdentRef", " , ".join(turtle.iri(uri) for uri in annotation.uris)))
        if with_confidence and annotation.confidence is not None:
            properties.append(("itsrdf:taConfidence", turtle.double(annotation.confidence)))
        phrase = turtle.iri(f"{base}#char={annotation.start},{annotation.end}")
        nodes.append(_node(phrase, "nif:Phrase", annotation.start, annotation.end, properties))
    return "\n".join([_PREFIXES, *nodes])


def _node(subject: str, kind: str, start: int, end: int, properties: Sequence[tuple[str, str]]) -> str:
    lines = [f"{subject} a {kind} , nif:String , nif:RFC5147String",
             f'    nif:beginIndex "{start}"^^xsd:nonNegativeInteger',
             f'    nif:endIndex "{end}"^^xsd:nonNegativeInteger',
             *(f"    {predicate} {value}" for predicate, value in properties)]
    return " ;\n".join(lines) + " .\n"


def _xsd_string(text: str) -> str:
    return f"{turtle.string(text)}^^xsd:string"
