"""NIF requests written by hand in the shape GERBIL's NIF writer sends them (independent of nif.write)."""
from __future__ import annotations

from collections.abc import Sequence

REQUEST_BASE = "http://www.aksw.org/gerbil/NifWebService/request_0"
HEADERS = {"Content-Type": "application/x-turtle;charset=UTF-8", "Accept": "application/x-turtle"}

# Every table word of DictionaryLinker next to an accent, CJK, an astral-plane emoji, a tab, CRLF and NBSP.
TRICKY_TEXT = "Zürich\tand 東京 🚀 met London\r\nvia\u00a0Paris 😀 with Ada Lovelace."

_PREFIXES = """@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> .
@prefix itsrdf: <http://www.w3.org/2005/11/its/rdf#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
"""


def turtle_string(text: str) -> str:
    """A Turtle string literal typed xsd:string, escaped by hand."""
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
               .replace("\t", "\\t"))
    return f'"{escaped}"^^xsd:string'


def gerbil_request(text: str, spans: Sequence[tuple[int, int]] = (), *, base: str = REQUEST_BASE) -> bytes:
    """A GERBIL request: A2KB without spans, D2KB with bare spans (no itsrdf:taIdentRef).

    Args:
        text: the document text.
        spans: D2KB spans as code-point offsets.
        base: the document URI without fragment.

    Returns:
        The UTF-8 Turtle body.
    """
    context = f"<{base}#char=0,{len(text)}>"
    lines = [_PREFIXES,
             f"{context} a nif:RFC5147String , nif:String , nif:Context ;",
             '    nif:beginIndex "0"^^xsd:nonNegativeInteger ;',
             f'    nif:endIndex "{len(text)}"^^xsd:nonNegativeInteger ;',
             f"    nif:isString {turtle_string(text)} .", ""]
    for start, end in spans:
        lines += [f"<{base}#char={start},{end}> a nif:RFC5147String , nif:String , nif:Phrase ;",
                  f"    nif:anchorOf {turtle_string(text[start:end])} ;",
                  f'    nif:beginIndex "{start}"^^xsd:nonNegativeInteger ;',
                  f'    nif:endIndex "{end}"^^xsd:nonNegativeInteger ;',
                  f"    nif:referenceContext {context} .", ""]
    return "\n".join(lines).encode("utf-8")


def span_of(text: str, word: str) -> tuple[int, int]:
    """The code-point span of the first occurrence of `word` in `text`."""
    start = text.index(word)
    return start, start + len(word)
