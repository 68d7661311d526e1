"""Every kind of answer the endpoint gives reads the same in five independent RDF/NIF parsers."""
from __future__ import annotations

import pytest

from nif import parse_document
from tests.support.dictionary_linker import DictionaryLinker
from tests.support.gerbil_requests import HEADERS, TRICKY_TEXT, gerbil_request, span_of
from tests.support.rdf_readers import READERS, Reading, ReaderUnavailable
from annotator.service import create_app

# name → (app settings, request body): A2KB, D2KB, confidences, two URIs per span, tricky Unicode,
# and a one-word text whose only annotation has the context's own URI.
CASES = {
    "a2kb": ({}, gerbil_request(TRICKY_TEXT)),
    "d2kb": ({}, gerbil_request(TRICKY_TEXT, [span_of(TRICKY_TEXT, "東京"), span_of(TRICKY_TEXT, "Paris"),
                                              span_of(TRICKY_TEXT, "via")])),
    "confidence_and_wikipedia": ({"WITH_CONFIDENCE": True, "WIKIPEDIA_URIS": True}, gerbil_request(TRICKY_TEXT)),
    "quotes_and_backslashes": ({}, gerbil_request('He said "London" \\ not """Paris""".')),
    "whole_text_is_a_mention": ({}, gerbil_request("London")),
    "no_mentions": ({}, gerbil_request("Nothing to link here.")),
}


@pytest.fixture(scope="module")
def answers() -> dict[str, bytes]:
    bodies = {}
    for name, (config, request) in CASES.items():
        client = create_app({"TESTING": True, **config}, linker=DictionaryLinker()).test_client()
        response = client.post("/", data=request, headers=HEADERS)
        assert response.status_code == 200, response.data
        bodies[name] = response.data
    return bodies


def ours(body: bytes) -> Reading:
    doc = parse_document(body)
    return Reading(doc.text, frozenset((a.start, a.end, a.uris) for a in doc.annotations))


# Jena starts a JVM per case (seconds): slow tier.
@pytest.mark.parametrize("reader", [pytest.param(name, marks=pytest.mark.slow) if name == "jena" else name
                                    for name in READERS])
@pytest.mark.parametrize("case", CASES)
def test_independent_parsers_find_the_same_annotations(answers: dict[str, bytes], reader: str, case: str) -> None:
    try:
        theirs = READERS[reader](answers[case])
    except ReaderUnavailable as error:
        pytest.skip(str(error))
    expected = ours(answers[case])
    assert theirs.text == expected.text
    if reader == "pynif":  # pynif keeps one itsrdf:taIdentRef per phrase
        assert {(s, e) for s, e, _ in theirs.annotations} == {(s, e) for s, e, _ in expected.annotations}
        by_span = {(s, e): uris for s, e, uris in expected.annotations}
        assert all(set(uris) <= set(by_span[s, e]) and len(uris) == 1 for s, e, uris in theirs.annotations)
    else:
        assert theirs.annotations == expected.annotations


def test_the_cases_cover_what_they_claim(answers: dict[str, bytes]) -> None:
    a2kb = parse_document(answers["a2kb"])
    assert {a2kb.text[a.start:a.end] for a in a2kb.annotations} == {"Zürich", "東京", "London", "Paris", "Ada Lovelace"}
    assert all(len(a.uris) == 2 and a.confidence == 0.9
               for a in parse_document(answers["confidence_and_wikipedia"]).annotations)
    assert len(parse_document(answers["d2kb"]).annotations) == 2
