"""The JSON API (/api/link, /api/link/batch) and its OpenAPI description, through Flask's test client."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from openapi_spec_validator import validate

from annotator.data_types import Mention
from annotator.uris import dbpedia_uri
from tests.support.dictionary_linker import DictionaryLinker
from tests.support.slow_linker import SlowLinker
from annotator.service import create_app

TEXT = "Ada Lovelace wrote to Babbage from London 😀 and Zürich."


class DescribedLinker(DictionaryLinker):
    """DictionaryLinker with descriptions and γ, as the EntQA linker gives them."""

    def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
        return [Mention(m.start, m.end, m.surface, m.title, m.uri, m.score, f"{m.title}, a test entity")
                for m in super().link(text, spans)]

    def describe(self) -> dict[str, str | int | float]:
        return {**super().describe(), "entities": len(self.table), "threshold": 0.05}


@pytest.fixture
def app() -> Flask:
    return create_app({"TESTING": True, "MAX_DOCUMENT_CHARS": 100, "MAX_DOCUMENTS_PER_REQUEST": 3},
                      linker=DescribedLinker())


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def test_link_answers_mentions_in_code_points_with_their_entities(client: FlaskClient) -> None:
    response = client.post("/api/link", json={"text": TEXT})
    assert response.status_code == 200 and response.mimetype == "application/json"
    answer = response.get_json()
    assert answer["threshold"] == 0.05
    assert [(m["start"], m["end"], m["surface"]) for m in answer["mentions"]] == [
        (0, 12, "Ada Lovelace"), (22, 29, "Babbage"), (35, 41, "London"), (48, 54, "Zürich")]
    assert all(TEXT[m["start"]:m["end"]] == m["surface"] for m in answer["mentions"])  # the emoji is one offset
    assert answer["mentions"][1] == {
        "start": 22, "end": 29, "surface": "Babbage", "title": "Charles Babbage",
        "uri": "http://dbpedia.org/resource/Charles_Babbage",
        "wikipedia_url": "https://en.wikipedia.org/wiki/Charles_Babbage", "score": 0.9,
        "description": "Charles Babbage, a test entity"}


def test_link_with_spans_links_only_those(client: FlaskClient) -> None:
    answer = client.post("/api/link", json={"text": TEXT, "spans": [[35, 41], [13, 18]]}).get_json()
    assert [(m["surface"], m["uri"]) for m in answer["mentions"]] == [("London", dbpedia_uri("London"))]


def test_a_nil_mention_has_no_wikipedia_url() -> None:
    class NilLinker(DictionaryLinker):
        def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
            return [Mention(0, 2, "He", None, "http://aksw.org/notInWiki/He", 0.01)]

    answer = create_app({"TESTING": True}, linker=NilLinker()).test_client().post(
        "/api/link", json={"text": "He left.", "spans": [[0, 2]]}).get_json()
    assert answer == {"mentions": [{"start": 0, "end": 2, "surface": "He", "title": None,
                                    "uri": "http://aksw.org/notInWiki/He", "wikipedia_url": None, "score": 0.01,
                                    "description": ""}], "threshold": None}


def test_batch_answers_each_document_in_order(client: FlaskClient) -> None:
    response = client.post("/api/link/batch", json={"documents": [{"text": "Paris, then London."},
                                                                   {"text": "nothing here"},
                                                                   {"text": "London", "spans": [[0, 6]]}]})
    assert response.status_code == 200
    documents = response.get_json()["documents"]
    assert [[m["surface"] for m in document["mentions"]] for document in documents] == [
        ["Paris", "London"], [], ["London"]]


@pytest.mark.parametrize(("body", "reason"), [
    ({}, "text: Field required"),
    ({"spans": [[0, 1]]}, "text: Field required"),
    ({"text": 3}, "text: Input should be a valid string"),
    ({"text": ""}, "text: String should have at least 1 character"),
    ({"text": "Paris", "spans": "0-5"}, "spans: Input should be a valid array"),
    ({"text": "Paris", "spans": [["0", 5]]}, "spans.0.0: Input should be a valid integer"),
    ({"text": "Paris", "spans": [[0, 2.5]]}, "spans.0.1: Input should be a valid integer"),
    ({"text": "Paris", "spans": [[0]]}, "spans.0.1: Field required"),
    ({"text": "Paris", "spans": [[-1, 3]]}, "spans.0.0: Input should be greater than or equal to 0"),
    ({"text": "Paris", "spans": [[2, 2]]}, "bad request: span [2, 2] is empty or outside the text of 5 characters; "
                                           "expected 0 <= start < end <= 5"),
    ({"text": "Paris", "spans": [[3, 6]]}, "span [3, 6] is empty or outside the text of 5 characters"),
    ({"text": "Paris", "lang": "en"}, "lang: Extra inputs are not permitted"),
    (["Paris"], "bad request: Input should be an object"),
])
def test_bad_input_is_a_400_naming_what_is_wrong(client: FlaskClient, body: Any, reason: str) -> None:
    response = client.post("/api/link", json=body)
    assert response.status_code == 400
    assert reason in response.get_json()["error"]


def test_bad_json_and_other_content_types_are_refused_in_json(client: FlaskClient) -> None:
    response = client.post("/api/link", data='{"text": "Paris"', content_type="application/json")
    assert response.status_code == 400 and "Invalid JSON" in response.get_json()["error"]
    # a form, as curl -d sends by default
    response = client.post("/api/link", data="text=Paris", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert response.get_json() == {"error": "unsupported content type 'application/x-www-form-urlencoded'; "
                                            "expected application/json"}
    assert client.post("/api/link", data='{"text": "Paris"}').get_json() == {
        "error": "unsupported content type none; expected application/json"}


def test_bad_batches_are_refused(client: FlaskClient) -> None:
    def error(body: Any) -> tuple[int, str]:
        response = client.post("/api/link/batch", json=body)
        return response.status_code, response.get_json()["error"]

    assert error({"documents": []}) == (400, "bad request: documents: List should have at least 1 item after "
                                             "validation, not 0")
    assert error({"documents": [{"text": "a"}], "lang": "en"}) == (400, "bad request: lang: Extra inputs are not "
                                                                       "permitted")
    assert error({"documents": [{"text": "a"}] * 4}) == (
        413, "4 documents are over the limit of 3 documents per batch (ENTQA_MAX_DOCUMENTS_PER_REQUEST)")
    assert error({"documents": [{"text": "a" * 60}, {"text": "b" * 50}]}) == (
        413, "documents of 110 characters in all are over the limit of 100 characters (ENTQA_MAX_DOCUMENT_CHARS)")


class PassRecordingLinker(DescribedLinker):
    """Links batches too, remembering the texts of each pass (a one-text list for `link`)."""

    def __init__(self) -> None:
        super().__init__()
        self.passes: list[list[str]] = []

    def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
        return self.link_batch([text], [spans])[0]

    def link_batch(self, texts: Sequence[str],
                   spans: Sequence[Sequence[tuple[int, int]] | None] | None = None) -> list[list[Mention]]:
        self.passes.append(list(texts))
        return [DescribedLinker.link(self, text, given)
                for text, given in zip(texts, spans or [None] * len(texts))]


@pytest.mark.parametrize(("batch_documents", "passes"), [(8, [["Paris, then London.", "Zürich", "London"]]),
                                                         (2, [["Paris, then London.", "Zürich"], ["London"]])])
def test_a_batchs_documents_are_linked_in_shared_passes_within_the_batching_limit(
        batch_documents: int, passes: list[list[str]]) -> None:
    linker = PassRecordingLinker()
    client = create_app({"TESTING": True, "BATCH_DOCUMENTS": batch_documents}, linker=linker).test_client()
    documents = [{"text": "Paris, then London."}, {"text": "Zürich"}, {"text": "London", "spans": [[0, 6]]}]
    answers = client.post("/api/link/batch", json={"documents": documents}).get_json()["documents"]
    assert linker.passes == passes
    assert answers == [client.post("/api/link", json=document).get_json() for document in documents]


class FailingLinker(DescribedLinker):
    """Fails on a text with "boom" in it."""

    def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
        if "boom" in text:
            raise RuntimeError("boom")
        return super().link(text, spans)


def test_a_batch_answers_each_document_as_api_link_would_a_bad_or_failing_one_with_its_error_alone() -> None:
    client = create_app({"TESTING": True, "BATCH_DOCUMENTS": 8}, linker=FailingLinker()).test_client()
    documents: list[Any] = [{"text": TEXT}, {"txt": "Paris"}, {"text": "boom in Paris"}, "London",
                            {"text": "Paris", "spans": [[3, 6]]}, {"text": "London", "spans": [[0, 6]]}]
    response = client.post("/api/link/batch", json={"documents": documents})
    assert response.status_code == 200
    answers = response.get_json()["documents"]
    alone = [client.post("/api/link", json=document) for document in documents]
    assert [answer.status_code for answer in alone] == [200, 400, 500, 400, 400, 200]
    assert answers == [answer.get_json() if answer.status_code == 200
                       else {**answer.get_json(), "status": answer.status_code} for answer in alone]
    assert answers[1:5] == [
        {"error": "bad request: text: Field required; txt: Extra inputs are not permitted", "status": 400},
        {"error": "internal error: RuntimeError (details in the server log)", "status": 500},
        {"error": "bad request: Input should be an object", "status": 400},
        {"error": "bad request: span [3, 6] is empty or outside the text of 5 characters; expected 0 <= start < end "
                  "<= 5", "status": 400}]
    assert [m["surface"] for m in answers[5]["mentions"]] == ["London"]


def test_a_batch_past_the_document_timeout_answers_each_document_dropped() -> None:
    client = create_app({"TESTING": True, "DOCUMENT_TIMEOUT": 0.3}, linker=SlowLinker(seconds=30)).test_client()
    answers = client.post("/api/link/batch", json={"documents": [{"text": "Paris"}, {"text": "London"}]}).get_json()
    assert answers == {"documents": [{"error": "document dropped: took longer than the limit of 0.3 s",
                                      "status": 503}] * 2}


def test_too_long_a_text_or_body_is_a_413_in_json(app: Flask) -> None:
    client = app.test_client()
    response = client.post("/api/link", json={"text": "a" * 101})
    assert response.status_code == 413
    assert response.get_json() == {"error": "document of 101 characters is over the limit of 100 characters "
                                            "(ENTQA_MAX_DOCUMENT_CHARS)"}
    app.config["MAX_CONTENT_LENGTH"] = 50
    response = client.post("/api/link", json={"text": "a" * 60})
    assert response.status_code == 413 and "ENTQA_MAX_CONTENT_LENGTH" in response.get_json()["error"]


def test_json_routes_answer_json_errors_and_nif_routes_plain_text(client: FlaskClient) -> None:
    assert client.get("/api/link").get_json() == {"error": "405 Method Not Allowed"}
    response = client.post("/gerbil", data="not turtle", content_type="text/turtle")
    assert response.status_code == 400 and response.mimetype == "text/plain"


def test_openapi_description_is_valid_openapi_3_from_the_request_models(client: FlaskClient) -> None:
    description = client.get("/openapi.json").get_json()
    validate(description)
    assert description["openapi"].startswith("3.")
    # the last: annotator.service.admin
    assert set(description["paths"]) == {"/api/link", "/api/link/batch", "/api/kb/reload"}
    request_schema = description["components"]["schemas"]["LinkRequest"]
    assert request_schema["required"] == ["text"] and set(request_schema["properties"]) == {"text", "spans"}
    answers = description["paths"]["/api/link"]["post"]["responses"]
    assert {"200", "400", "413", "503"} <= set(answers)
    batch = description["paths"]["/api/link/batch"]["post"]
    assert batch["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/BatchLinkRequest"}
    schemas = description["components"]["schemas"]
    document = schemas["BatchLinkRequest"]["properties"]["documents"]["items"]["$ref"].rsplit("/", 1)[1]
    assert schemas[document] == request_schema  # one document of a batch is described as /api/link's body
    answer = schemas["BatchLinkResponse"]["properties"]["documents"]["items"]["anyOf"]
    assert [schemas[one["$ref"].rsplit("/", 1)[1]]["required"] for one in answer] == [
        ["mentions", "threshold"], ["error", "status"]]
