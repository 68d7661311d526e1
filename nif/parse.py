"""Read NIF 2.0 documents (a GERBIL request or answer, or a benchmark corpus) into `NifDocument`s."""
from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import rdflib
from rdflib import RDF, XSD, Graph, Literal
from rdflib.term import Node

from nif.data_types import NifAnnotation, NifDocument
from nif.errors import NifParseError
from nif.vocabulary import ITSRDF, NIF

logger = logging.getLogger(__name__)

_DIGITS = re.compile(r"(\d+)")
_SURROGATE = re.compile("[\ud800-\udfff]")
# rdflib collapses the whitespace of these types' literals whatever it is told, so a text typed with one
# cannot be kept as sent.
_WHITESPACE_REWRITTEN = (XSD.token, XSD.normalizedString)
# rdflib rewrites typed literals into canonical form ("01"^^xsd:integer → "1") unless its process-wide switch
# is off; parses turn it off for their duration, one at a time, so that none restores it under another.
_VERBATIM_LITERALS = threading.Lock()


# The base relative IRIs resolve against: recognisable, and reserved (.invalid) so it names nothing.
RELATIVE_BASE = "http://relative-iri.invalid/"


def load_graph(data: bytes | str, *, format: str = "turtle") -> Graph:
    """Parses serialised RDF into a graph.

    Literals keep their lexical forms as written (`"01"^^xsd:integer` stays `01`), and a leading UTF-8
    byte-order mark is skipped.

    Args:
        data: the serialised RDF; bytes must be UTF-8.
        format: an rdflib parser name ("turtle", "nt", "xml", ...).

    Returns:
        The parsed graph.

    Raises:
        NifParseError: the bytes are not UTF-8 or the text is not valid `format`.
    """
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise NifParseError(f"input is not valid UTF-8 (byte {error.start})") from None
    try:
        with _verbatim_literals():
            # Relative IRIs resolve against a fixed base, never the server's working folder (file:///...).
            return Graph().parse(data=data.removeprefix("\ufeff"), format=format, publicID=RELATIVE_BASE)
    except Exception as error:  # rdflib's parsers raise many unrelated exception types
        reason = " ".join(str(error).split())[:300] or type(error).__name__
        raise NifParseError(f"malformed {format}: {reason}") from None


def documents_in(graph: Graph) -> list[NifDocument]:
    """Every `nif:Context` that has a `nif:isString`, with the annotations that reference it.

    RDF graphs are unordered, so the order of the corpus file is lost. Documents come in a
    deterministic order instead: by context URI without its `#...` fragment, compared naturally
    (digit runs as numbers, so `request_2` precedes `request_10`), then by the full URI.

    Annotations are the subjects with `nif:referenceContext` pointing at the context and both a
    `nif:beginIndex` and a `nif:endIndex` (others are skipped with a warning, as GERBIL does), sorted
    by `(start, end)`; a span may be empty. Index literals may be of any integer datatype or plain; all
    `itsrdf:taIdentRef` values are kept, sorted.

    Texts and IRIs are Unicode scalar values: rdflib reads an escaped UTF-16 surrogate pair
    (`\\uD83D\\uDE00`) as two halves, which are joined into the one character they encode, so offsets
    count it once.

    Args:
        graph: a parsed NIF graph.

    Returns:
        The documents, in the order described above.

    Raises:
        NifParseError: a context has several strings, a string that is not a literal or is typed
            xsd:token or xsd:normalizedString (rdflib rewrites those), a text or IRI holds a lone
            surrogate, or an annotation has an index that is not a single integer within the context string.
    """
    contexts = {context for context in graph.subjects(RDF.type, NIF.Context)
                if (context, NIF.isString, None) in graph}
    return [_document(graph, context) for context in sorted(contexts, key=_natural_key)]


def parse_document(data: bytes | str, *, format: str = "turtle") -> NifDocument:
    """The one document of a GERBIL request or answer.

    GERBIL sends one document per request. Input with several contexts that have a `nif:isString` is
    refused rather than answered in part. Spans without `itsrdf:taIdentRef` are what a D2KB request
    carries; no spans at all is an A2KB request.

    Args:
        data: the serialised NIF; bytes must be UTF-8.
        format: an rdflib parser name.

    Returns:
        The document.

    Raises:
        NifParseError: the input is malformed (see `documents_in`), or has no `nif:Context` with a
            `nif:isString`, or several.
    """
    graph = load_graph(data, format=format)
    documents = documents_in(graph)
    if not documents:
        if (None, RDF.type, NIF.Context) in graph:
            raise NifParseError("no nif:Context with nif:isString")
        raise NifParseError("no nif:Context in the input")
    if documents[0].uri.startswith(RELATIVE_BASE):
        relative = documents[0].uri.removeprefix(RELATIVE_BASE)
        raise NifParseError(f"the context IRI <{relative[:80]}> is relative; expected an absolute IRI")
    if len(documents) > 1:
        raise NifParseError(f"{len(documents)} nif:Contexts with nif:isString (first {documents[0].uri[:80]!r}), "
                            "expected one document")
    return documents[0]


@contextmanager
def _verbatim_literals() -> Iterator[None]:
    with _VERBATIM_LITERALS:
        normalize, rdflib.NORMALIZE_LITERALS = rdflib.NORMALIZE_LITERALS, False
        try:
            yield
        finally:
            rdflib.NORMALIZE_LITERALS = normalize


def _natural_key(node: Node) -> tuple[tuple[tuple[int, int | str], ...], str]:
    base = str(node).split("#", 1)[0]
    parts = tuple((0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(base) if part)
    return parts, str(node)


def _document(graph: Graph, context: Node) -> NifDocument:
    uri = _scalar_values(str(context), "context IRI")
    strings = list(graph.objects(context, NIF.isString))
    if len(strings) != 1:
        raise NifParseError(f"context {uri} has {len(strings)} nif:isString values, expected 1")
    (string,) = strings
    if not isinstance(string, Literal):
        raise NifParseError(f"context {uri} has a nif:isString that is not a literal: {string}")
    if string.datatype in _WHITESPACE_REWRITTEN:
        raise NifParseError(f"context {uri} has a nif:isString typed {string.datatype}, whose whitespace the "
                            "parser would rewrite; expected xsd:string, a plain or a language-tagged string")
    text = _scalar_values(str(string), f"nif:isString of {uri}")
    annotations = []
    for subject in set(graph.subjects(NIF.referenceContext, context)):
        begin, end = graph.value(subject, NIF.beginIndex), graph.value(subject, NIF.endIndex)
        if begin is None or end is None:
            logger.warning("annotation %s of %s lacks nif:beginIndex or nif:endIndex, ignored", subject, context)
            continue
        start, stop = _index(graph, subject, "beginIndex"), _index(graph, subject, "endIndex")
        if not 0 <= start <= stop <= len(text):
            raise NifParseError(f"annotation {subject} spans {start},{stop} outside a text of length {len(text)}")
        uris = tuple(sorted(_scalar_values(str(uri), f"itsrdf:taIdentRef of {subject}")
                            for uri in graph.objects(subject, ITSRDF.taIdentRef)))
        annotations.append(NifAnnotation(start, stop, uris, _confidence(graph, subject)))
    annotations.sort(key=lambda annotation: (annotation.start, annotation.end, annotation.uris))
    return NifDocument(uri, text, tuple(annotations))


def _scalar_values(value: str, what: str) -> str:
    """`value` with its escaped surrogate pairs joined into the characters they encode; a lone half is refused."""
    if not _SURROGATE.search(value):
        return value
    joined = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    lone = _SURROGATE.search(joined)
    if lone is not None:
        raise NifParseError(f"the {what} holds a lone UTF-16 surrogate U+{ord(lone.group()):04X} at character "
                            f"{lone.start()}; escaped surrogates must come in high-low pairs")
    return joined


def _index(graph: Graph, subject: Node, name: str) -> int:
    values = list(graph.objects(subject, NIF[name]))
    if len(values) != 1:
        raise NifParseError(f"annotation {subject} has {len(values)} nif:{name} values, expected 1")
    try:
        return int(str(values[0]))
    except ValueError:
        raise NifParseError(f"annotation {subject} has a non-integer nif:{name} {str(values[0])!r}") from None


def _confidence(graph: Graph, subject: Node) -> float | None:
    value = graph.value(subject, ITSRDF.taConfidence, any=True)
    if value is None:
        return None
    try:
        return float(str(value))
    except ValueError:
        raise NifParseError(f"annotation {subject} has a non-numeric itsrdf:taConfidence {str(value)!r}") from None
