"""Property-based and fuzz tests of the endpoint (issue 47).

Every request gets either a 4xx with a one-line reason or a 200 whose Turtle rdflib, Oxigraph and rapper (where
installed) all read, with `nif:isString` exactly as sent and every `nif:anchorOf` equal to the text at its
offsets. Requests are random NIF documents (random Unicode with surrogates, combining marks and astral
characters, spelled raw, escaped or as UTF-16 surrogate pairs; random datatypes, context IRIs and D2KB spans),
the same cut short, and random bytes. Derandomized, so CI tries the same inputs every run.
"""
from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass

import pyoxigraph
import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from werkzeug.test import TestResponse

from annotator.data_types import Mention
from annotator.uris import NIL_NAMESPACE, not_in_wiki_uri
from tests.support.dictionary_linker import DEFAULT_TABLE, DictionaryLinker
from tests.support.rdf_readers import Reading, as_rapper_reads, read_oxigraph, read_rapper, read_rdflib
from annotator.service import create_app

FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])
NIF = "http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#"
PREFIXES = (f"@prefix nif: <{NIF}> .\n@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
            "@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .\n@prefix ex: <http://e.org/> .\n")
ANCHORS = f"SELECT ?begin ?end ?anchor WHERE {{ ?a <{NIF}anchorOf> ?anchor ; <{NIF}beginIndex> ?begin ; " \
          f"<{NIF}endIndex> ?end }}"
CONTEXTS = f"SELECT ?context WHERE {{ ?context a <{NIF}Context> }}"
HAS_RAPPER = shutil.which("rapper") is not None

# Characters that have broken Turtle readers or writers: quotes, backslashes, controls, line separators, the
# byte-order mark, noncharacters, combining marks, astral characters and a UTF-16 surrogate pair (joined when
# read). Lone halves are added apart (`requests`), so that most requests stay answerable.
AWKWARD = ["\\", '"', "'", '\\"', "\n", "\r", "\t", "\x00", "\x7f", "\u0085", "\u2028", "\ufeff", "\ufffe", "\uffff",
           "\u0301", "\u0308", "😀", "\U0010fffd", "\ud83d\ude00", "<>{}|^`", " ", "#", "%", "."]
# Lexical forms are kept for any datatype but these two, whose whitespace rdflib rewrites (refused with a 400).
DATATYPES = ["", "^^xsd:string", "@en", "@de-CH", "^^xsd:integer", "^^xsd:boolean", "^^xsd:double", "^^xsd:decimal",
             "^^xsd:dateTime", "^^xsd:hexBinary", "^^xsd:base64Binary", "^^rdf:XMLLiteral", "^^<http://e.org/type>"]
REWRITTEN_DATATYPES = ["^^xsd:token", "^^xsd:normalizedString"]
# True one draw in ten (Hypothesis favours the first choice, so the rare one comes last).
RARELY = st.sampled_from([False] * 9 + [True])
# Characters a Turtle IRIREF may not hold raw.
NOT_IN_IRIREF = set('<>"{}|^`\\') | {chr(code) for code in range(0x21)}


class NilEchoLinker(DictionaryLinker):
    """DictionaryLinker, but in D2KB a span that is no table entry gets its NIL IRI, which holds the surface."""

    def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
        if spans is None:
            return super().link(text)
        return [self._mention(text, start, end) if text[start:end] in self.table else
                Mention(start, end, text[start:end], None, not_in_wiki_uri(NIL_NAMESPACE, text[start:end]), 0.1)
                for start, end in spans]


@dataclass(frozen=True)
class FuzzRequest:
    """A request body and what a correct service must do with it."""

    body: bytes
    # The context IRI and text the answer must carry (escaped surrogate pairs joined) and the spans it must answer
    # (None: A2KB); all None where the request is unanswerable by construction and must get a 4xx.
    context: str | None
    text: str | None
    spans: frozenset[tuple[int, int]] | None


@dataclass(frozen=True)
class Answer:
    """A 200 answer as Oxigraph reads it."""

    context: str
    reading: Reading


@pytest.fixture(scope="module")
def client() -> FlaskClient:
    return create_app({"TESTING": True, "WITH_CONFIDENCE": True, "WIKIPEDIA_URIS": True},
                      linker=NilEchoLinker()).test_client()


def joined(text: str) -> str:
    """`text` with its surrogate pairs joined, as the parser reads them."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def has_surrogates(text: str) -> bool:
    return any(0xD800 <= ord(char) <= 0xDFFF for char in text)


def is_absolute_iri(iri: str) -> bool:
    """Whether Oxigraph, the strictest reader, takes `iri`: only such a context can be repeated in an answer."""
    try:
        pyoxigraph.NamedNode(iri)
    except ValueError:
        return False
    return True


def range_agrees(iri: str, text: str) -> bool:
    """Whether a context IRI's `#char=a,b` range, where it ends in one, is the whole text's."""
    claimed = re.search(r"#char=(\d+),(\d+)$", iri)
    return claimed is None or (int(claimed.group(1)), int(claimed.group(2))) == (0, len(text))


def uchar(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


def spell_string(text: str, spelling: str) -> str:
    """A Turtle string literal for `text`: "raw" (only what must be escaped is), "escaped" (all but printable
    ASCII as \\u escapes), or "utf16" (escaped, with astral characters as surrogate pairs, as Java writes them)."""
    out = []
    for char in text:
        if char in '\\"':
            out.append("\\" + char)
        elif char in "\n\r" or has_surrogates(char) or (spelling != "raw" and not " " <= char <= "~"):
            out.append(utf16_escapes(char) if spelling == "utf16" else uchar(char))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def utf16_escapes(char: str) -> str:
    units = char.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04X}" for i in range(0, len(units), 2))


def spell_iri(iri: str) -> str:
    """`<iri>` with the characters IRIREF cannot hold raw (and surrogates) as \\u escapes."""
    return "<" + "".join(uchar(char) if char in NOT_IN_IRIREF or has_surrogates(char) else char for char in iri) + ">"


texts = st.lists(st.one_of(st.sampled_from(AWKWARD), st.sampled_from([*DEFAULT_TABLE, "Zu\u0308rich"]),
                           st.text(st.characters(codec=None), max_size=4)), max_size=8).map("".join)
iri_paths = st.lists(st.one_of(st.sampled_from(["doc", "request_0#char=0,5", "a/b?c=d", "ü", "😀", "%41", "%zz"]),
                               st.sampled_from(AWKWARD)), max_size=3).map("".join)


@st.composite
def spans_in(draw: st.DrawFn, length: int) -> tuple[int, int]:
    """A non-empty span of a text of `length` characters (empty when the text is)."""
    begin = draw(st.integers(0, max(length - 1, 0)))
    return begin, draw(st.integers(min(begin + 1, length), length))


@st.composite
def requests(draw: st.DrawFn) -> FuzzRequest:
    """A random NIF request: one or two contexts, a typed text, and D2KB spans with random indexes."""
    text = draw(texts)
    if draw(RARELY):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["\ud83d", "\ude00"])) + text[at:]
    spelling = draw(st.sampled_from(["raw", "escaped", "utf16"]))
    datatype = draw(st.one_of(st.just("^^xsd:string"), st.sampled_from(DATATYPES + REWRITTEN_DATATYPES)))
    context_kind = draw(st.sampled_from(["gerbil", "gerbil", "gerbil-range", "random", "blank", "prefixed"]))
    expected = joined(text)
    # GERBIL's context IRI holds the text's range; another range is refused (the answer's phrases would collide)
    iri = {"gerbil": f"http://www.aksw.org/gerbil/NifWebService/request_0#char=0,{len(expected)}",
           "gerbil-range": "http://www.aksw.org/gerbil/NifWebService/request_0#char=0,9",
           "random": "http://e.org/" + draw(iri_paths), "blank": None, "prefixed": "http://e.org/doc"}[context_kind]
    subject = {"blank": "_:c", "prefixed": "ex:doc"}.get(context_kind) or spell_iri(iri)
    context = None if iri is None else joined(iri)
    literal = spell_string(text, spelling) + datatype
    lines = [PREFIXES, f"{subject} a nif:Context , nif:String ; nif:isString {literal} ."]
    spans = draw(st.lists(st.one_of(spans_in(len(expected)), spans_in(len(expected)), spans_in(len(expected)),
                                    st.tuples(st.integers(-1, len(text) + 1), st.integers(-1, len(text) + 1))),
                          max_size=4))
    for number, (begin, end) in enumerate(spans):
        index = draw(st.sampled_from(["{}", '"{}"^^xsd:nonNegativeInteger', '"0{}"^^xsd:int']))
        lines.append(f"_:p{number} nif:referenceContext {subject} ; nif:beginIndex {index.format(begin)} ; "
                     f"nif:endIndex {index.format(end)} .")
    several = draw(RARELY)
    if several:
        lines.append('<http://e.org/other> a nif:Context ; nif:isString "London" .')
    answerable = (context is not None and is_absolute_iri(context) and expected and not has_surrogates(expected)
                  and range_agrees(context, expected)
                  and datatype not in REWRITTEN_DATATYPES and not several
                  and all(0 <= begin < end <= len(expected) for begin, end in spans))
    body = ("\ufeff" if draw(st.booleans()) else "") + "\n".join(lines)
    if not answerable:
        return FuzzRequest(body.encode("utf-8"), None, None, None)
    return FuzzRequest(body.encode("utf-8"), context, expected, frozenset(spans) if spans else None)


def check_response(response: TestResponse) -> Answer | None:
    """The properties every answer has; the answer as Oxigraph reads it, for a 200."""
    event(f"HTTP {response.status_code}")
    if response.status_code != 200:
        assert 400 <= response.status_code < 500, response.data
        assert response.content_type == "text/plain; charset=utf-8"
        reason = response.get_data(as_text=True)
        assert reason.endswith("\n") and reason.count("\n") == 1 and reason.strip(), reason
        return None
    body = response.data
    ours = read_oxigraph(body)
    assert read_rdflib(body) == ours
    if HAS_RAPPER:
        theirs = read_rapper(body)
        # Spans only: raptor removes dot segments from IRIs (a NIL IRI of the surface "." loses its last ".").
        assert theirs.text == as_rapper_reads(ours.text)
        assert {span[:2] for span in theirs.annotations} == {span[:2] for span in ours.annotations}
    event("answer with annotations" if ours.annotations else "answer without annotations")
    store = pyoxigraph.Store()
    store.load(body, format=pyoxigraph.RdfFormat.TURTLE)
    for row in store.query(ANCHORS):
        assert row["anchor"].value == ours.text[int(row["begin"].value):int(row["end"].value)]
    (solution,) = store.query(CONTEXTS)
    return Answer(solution["context"].value, ours)


@FUZZ
@given(request=requests(), path=st.sampled_from(["/", "/gerbil"]))
def test_random_nif_requests_get_a_clear_4xx_or_a_faithful_answer(client: FlaskClient, request: FuzzRequest,
                                                                 path: str) -> None:
    response = client.post(path, data=request.body, headers={"Content-Type": "application/x-turtle;charset=UTF-8"})
    answer = check_response(response)
    if request.text is not None:
        assert answer is not None, response.data
        assert (answer.context, answer.reading.text) == (request.context, request.text)
        if request.spans is not None:  # NilEchoLinker answers every D2KB span
            assert {(start, end) for start, end, _ in answer.reading.annotations} == request.spans


@FUZZ
@given(request=requests(), data=st.data())
def test_requests_cut_short_get_a_clear_4xx_or_a_faithful_answer(client: FlaskClient, request: FuzzRequest,
                                                                data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(request.body)))
    check_response(client.post("/", data=request.body[:cut], headers={"Content-Type": "text/turtle"}))


@FUZZ
@given(body=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(lambda text: text.encode())),
       content_type=st.sampled_from(["application/x-turtle", "text/turtle; charset=latin-1", "application/json", ""]))
def test_random_bytes_get_a_clear_4xx(client: FlaskClient, body: bytes, content_type: str) -> None:
    response = client.post("/", data=body, headers={"Content-Type": content_type} if content_type else {})
    assert check_response(response) is None
