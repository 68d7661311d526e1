"""Hypothesis against the JSON API (/api/link, /api/link/batch), as deep as the NIF endpoint's fuzzing: whatever the
body, an answer is a 2xx with JSON whose mentions lie inside their texts, or a 4xx whose JSON says why; never a 5xx."""
from __future__ import annotations

import json
from typing import Any

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.support.dictionary_linker import DictionaryLinker
from annotator.service import create_app

AWKWARD = ["Paris", "London", " ", "\n", "😀", "Zu\u0308rich", "\u0000", "\ufeff", "\u202e", "<b>", "&amp;"]
texts = st.lists(st.one_of(st.sampled_from(AWKWARD), st.text(max_size=5)), max_size=8).map("".join)
numbers = st.one_of(st.integers(-3, 40), st.sampled_from([10**20, -(10**20), 1.5, True, None, "3"]))
spans = st.lists(st.one_of(st.tuples(numbers, numbers).map(list), st.lists(numbers, max_size=3), numbers, texts),
                 max_size=4)
documents = st.fixed_dictionaries({}, optional={"text": st.one_of(texts, numbers, st.lists(texts, max_size=2)),
                                                "spans": st.one_of(spans, numbers, texts),
                                                "id": st.one_of(texts, numbers)})


@st.composite
def valid_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A well-formed document: a text and, half the time, spans inside it (some empty or reversed)."""
    text = draw(texts.filter(bool))
    if draw(st.booleans()):
        return {"text": text}
    ends = st.integers(0, len(text))
    return {"text": text, "spans": draw(st.lists(st.tuples(ends, ends).map(sorted), max_size=3))}


leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), texts)
anything = st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(texts, inner, max_size=3)), max_leaves=6)
bodies = st.one_of(valid_documents(), valid_documents(), documents,
                   st.fixed_dictionaries({"documents": st.lists(valid_documents(), max_size=4)}),
                   st.fixed_dictionaries({"documents": st.lists(st.one_of(valid_documents(), documents, anything),
                                                                max_size=5)}),
                   st.fixed_dictionaries({"documents": anything}), anything)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def client() -> FlaskClient:
    return create_app({"TESTING": True, "MAX_DOCUMENT_CHARS": 60, "MAX_DOCUMENTS_PER_REQUEST": 3},
                      linker=DictionaryLinker()).test_client()


def check(response: Any, body: Any) -> None:
    event(f"HTTP {response.status_code}")
    assert response.status_code < 500, response.data
    assert response.mimetype == "application/json"
    answer = response.get_json()
    if response.status_code >= 400:
        assert isinstance(answer["error"], str) and answer["error"].strip() and "\n" not in answer["error"]
        return
    assert response.status_code == 200
    for document, sent in (zip(answer["documents"], body["documents"]) if "documents" in answer
                           else [(answer, body)]):
        if "error" in document:  # one bad document of a batch: its own reason and status
            assert 400 <= document["status"] < 600 and document["status"] != 500
            continue
        text = sent["text"]
        for mention in document["mentions"]:
            assert 0 <= mention["start"] < mention["end"] <= len(text)
            assert text[mention["start"]:mention["end"]] == mention["surface"]


@FUZZ
@given(body=bodies, route=st.sampled_from(["/api/link", "/api/link/batch"]))
def test_random_json_gets_an_answer_or_a_clear_4xx(client: FlaskClient, body: Any, route: str) -> None:
    check(client.post(route, data=json.dumps(body), content_type="application/json"), body)


@FUZZ
@given(body=st.binary(max_size=60), route=st.sampled_from(["/api/link", "/api/link/batch"]),
       content_type=st.sampled_from(["application/json", "text/plain", "", "application/json; charset=latin-1"]))
def test_random_bytes_get_a_clear_4xx(client: FlaskClient, body: bytes, route: str, content_type: str) -> None:
    response = client.post(route, data=body, content_type=content_type)
    assert 400 <= response.status_code < 500, response.data
    assert isinstance(response.get_json()["error"], str)


@FUZZ
@given(body=st.one_of(documents, st.fixed_dictionaries({"documents": st.lists(documents, max_size=3)})),
       cut=st.integers(0, 200), route=st.sampled_from(["/api/link", "/api/link/batch"]))
def test_a_body_cut_short_gets_a_clear_4xx(client: FlaskClient, body: Any, cut: int, route: str) -> None:
    data = json.dumps(body).encode("utf-8")
    if cut >= len(data):
        return
    response = client.post(route, data=data[:cut], content_type="application/json")
    assert 400 <= response.status_code < 500, response.data
    assert isinstance(response.get_json()["error"], str)
