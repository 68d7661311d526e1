"""Tests of the web module through Flask's test client, with the deterministic DictionaryLinker."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from annotator.data_types import Mention
from annotator.errors import ConfigError
from annotator.pipeline.linker import Linker
from annotator.runtime.settings import RuntimeSettings
from nif import NifAnnotation, parse_document
from tests.support.dictionary_linker import DictionaryLinker
from tests.support.gerbil_requests import HEADERS, REQUEST_BASE, TRICKY_TEXT, gerbil_request, span_of
from annotator.service import create_app

ZURICH_URI = "http://dbpedia.org/resource/Zürich"


@pytest.fixture
def app() -> Flask:
    return create_app({"TESTING": True}, linker=DictionaryLinker())


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def expected_a2kb(text: str) -> list[tuple[int, int, str]]:
    """What DictionaryLinker finds, as (start, end, surface)."""
    return [(m.start, m.end, m.surface) for m in DictionaryLinker().link(text)]


@pytest.mark.parametrize("path", ["/", "/gerbil"])
def test_a2kb_request_round_trips_with_exact_offsets(client: FlaskClient, path: str) -> None:
    response = client.post(path, data=gerbil_request(TRICKY_TEXT), headers=HEADERS)
    assert response.status_code == 200
    assert response.content_type == "application/x-turtle; charset=utf-8"
    answer = parse_document(response.data)
    assert answer.uri == f"{REQUEST_BASE}#char=0,{len(TRICKY_TEXT)}"
    assert answer.text == TRICKY_TEXT
    found = [(a.start, a.end, answer.text[a.start:a.end]) for a in answer.annotations]
    assert found == expected_a2kb(TRICKY_TEXT)
    assert {surface for _, _, surface in found} == {"Zürich", "東京", "London", "Paris", "Ada Lovelace"}
    assert all(a.confidence is None for a in answer.annotations)


def test_d2kb_request_answers_only_the_given_spans(client: FlaskClient) -> None:
    spans = [span_of(TRICKY_TEXT, "Zürich"), span_of(TRICKY_TEXT, "Paris"), span_of(TRICKY_TEXT, "met")]
    answer = parse_document(client.post("/", data=gerbil_request(TRICKY_TEXT, spans), headers=HEADERS).data)
    assert answer.annotations == (NifAnnotation(*spans[0], (ZURICH_URI,)),
                                  NifAnnotation(*spans[1], ("http://dbpedia.org/resource/Paris",)))


def test_d2kb_drops_mentions_off_the_given_spans() -> None:
    class Sloppy:
        def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
            return [Mention(0, 3, "Zür", "Zürich", ZURICH_URI, 0.9), Mention(0, 6, "Zürich", "Zürich", ZURICH_URI, 0.8)]

        def describe(self) -> dict[str, str]:
            return {}

    client = create_app({"TESTING": True}, linker=Sloppy()).test_client()
    answer = parse_document(client.post("/", data=gerbil_request("Zürich", [(0, 6)]), headers=HEADERS).data)
    assert answer.annotations == (NifAnnotation(0, 6, (ZURICH_URI,)),)


def test_d2kb_nil_answer_keeps_its_emerging_entity_iri_alone() -> None:
    nil_uri = "http://aksw.org/notInWiki/Grimbleton"

    class Unsure:
        def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
            return [Mention(0, 10, "Grimbleton", None, nil_uri, 0.01)]

        def describe(self) -> dict[str, str]:
            return {}

    client = create_app({"TESTING": True, "WIKIPEDIA_URIS": True}, linker=Unsure()).test_client()
    answer = parse_document(client.post("/", data=gerbil_request("Grimbleton", [(0, 10)]), headers=HEADERS).data)
    assert answer.annotations == (NifAnnotation(0, 10, (nil_uri,)),)


def test_mentions_sharing_a_span_become_one_annotation_best_first() -> None:
    class TwoMeanings:
        def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
            return [Mention(0, 5, "Paris", "Paris, Texas", "http://dbpedia.org/resource/Paris,_Texas", 0.2),
                    Mention(0, 5, "Paris", "Paris", "http://dbpedia.org/resource/Paris", 0.7)]

        def describe(self) -> dict[str, str]:
            return {}

    client = create_app({"TESTING": True, "WITH_CONFIDENCE": True}, linker=TwoMeanings()).test_client()
    answer = parse_document(client.post("/", data=gerbil_request("Paris"), headers=HEADERS).data)
    assert answer.annotations == (NifAnnotation(0, 5, ("http://dbpedia.org/resource/Paris",
                                                       "http://dbpedia.org/resource/Paris,_Texas"), 0.7),)


def test_confidence_and_wikipedia_uris_are_switches() -> None:
    app = create_app({"TESTING": True, "WITH_CONFIDENCE": True, "WIKIPEDIA_URIS": True},
                     linker=DictionaryLinker(score=0.25))
    answer = parse_document(app.test_client().post("/", data=gerbil_request("in Zürich"), headers=HEADERS).data)
    assert answer.annotations == (NifAnnotation(3, 9, (ZURICH_URI, "http://en.wikipedia.org/wiki/Zürich"), 0.25),)


def test_config_comes_from_defaults_then_environment_then_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENTQA_WITH_CONFIDENCE", "true")
    monkeypatch.setenv("ENTQA_KB_PATH", "/data/kb")
    app = create_app({"KB_PATH": "/other/kb"}, linker=DictionaryLinker())
    assert app.config["WITH_CONFIDENCE"] is True
    assert app.config["KB_PATH"] == "/other/kb"
    assert app.config["WIKIPEDIA_URIS"] is False
    assert app.config["MODEL_DIR"].endswith("models/entqa-minilm")
    assert app.extensions["entqa"].linker().describe() == DictionaryLinker().describe()


def test_linker_settings_come_from_the_environment_and_a_bad_one_stops_the_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    loaded: list[dict[str, Any]] = []

    def load(model_dir: str, **options: Any) -> DictionaryLinker:
        loaded.append({"model_dir": model_dir, **options})
        return DictionaryLinker()

    monkeypatch.setattr(Linker, "from_pretrained", load)  # what the app loads when it is given no linker
    monkeypatch.setenv("ENTQA_TOP_K", "20")
    monkeypatch.setenv("ENTQA_CPU_PRECISION", "fp32")
    app = create_app({"TESTING": True, "THRESHOLD": 0.1})
    assert app.extensions["entqa"].wait(timeout_s=10) == "ok"
    assert loaded == [{"model_dir": app.config["MODEL_DIR"], "kb_path": app.config["KB_PATH"], "index_dir": None,
                       "config_overrides": {"top_k": 20, "threshold": 0.1},
                       "runtime": RuntimeSettings(cpu_precision="fp32")}]
    monkeypatch.setenv("ENTQA_CPU_PRECISION", "fp16")
    with pytest.raises(ConfigError, match="ENTQA_CPU_PRECISION: Input should be 'auto', 'bf16', 'int8' or 'fp32'"):
        create_app({"TESTING": True})


def test_health_reports_the_linker(client: FlaskClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json == {"status": "ok", "model": "dictionary-test-linker", "kb": "6 test entries"}


@pytest.mark.parametrize(("body", "content_type", "status", "reason"), [
    (b"<a> <b> .", "application/x-turtle", 400, "bad NIF: malformed turtle"),
    (b"", "application/x-turtle", 400, "no nif:Context in the input"),
    (b"@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> . <http://e.org/d> a nif:Context .",
     "text/turtle", 400, "no nif:Context with nif:isString"),
    (gerbil_request(""), "application/x-turtle", 400, "nif:isString is empty"),
    (b"\xff\xfe\x00<", "application/x-turtle", 400, "not valid UTF-8"),
    (gerbil_request("Paris"), "application/json", 415, "unsupported content type"),
    (gerbil_request("Paris"), "text/html", 415, "unsupported content type"),
    (gerbil_request("Paris"), "application/x-turtle; charset=latin-1", 415, "unsupported content type"),
    (b"@prefix x: <http://e.org/> . " + b"#" * (64 * 1024), "application/x-turtle", 413,
     "request body over the limit of 32768 bytes"),
])
def test_bad_requests_get_a_one_line_4xx(body: bytes, content_type: str, status: int, reason: str) -> None:
    app = create_app({"TESTING": True, "MAX_CONTENT_LENGTH": 32 * 1024}, linker=DictionaryLinker())
    response = app.test_client().post("/", data=body, headers={"Content-Type": content_type})
    assert response.status_code == status
    assert response.content_type == "text/plain; charset=utf-8"
    text = response.get_data(as_text=True)
    assert reason in text and text.count("\n") == 1 and "Traceback" not in text


@pytest.mark.parametrize("content_type", [None, "application/octet-stream", "text/turtle; charset=UTF-8"])
def test_turtle_is_assumed_without_a_declared_type(client: FlaskClient, content_type: str | None) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    response = client.post("/", data=gerbil_request("Paris"), headers=headers)
    assert response.status_code == 200


def test_linker_failure_is_a_logged_500_and_the_next_request_works(caplog: pytest.LogCaptureFixture) -> None:
    class FailsOnce(DictionaryLinker):
        failed = False

        def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
            if not self.failed:
                self.failed = True
                raise RuntimeError("CUDA out of memory\nsecond line")
            return super().link(text, spans)

    client = create_app({"TESTING": True}, linker=FailsOnce()).test_client()
    failed = client.post("/", data=gerbil_request("Paris"), headers=HEADERS)
    assert failed.status_code == 500
    assert failed.get_data(as_text=True) == "internal error: RuntimeError (details in the server log)\n"
    assert "annotation failed" in caplog.text and "CUDA out of memory" in caplog.text
    assert parse_document(client.post("/", data=gerbil_request("Paris"), headers=HEADERS).data).annotations


def test_unknown_routes_and_methods_are_one_line_errors(client: FlaskClient) -> None:
    assert client.put("/").status_code == 405  # GET / is the web page, POST / the NIF endpoint
    assert client.post("/nothing").get_data(as_text=True) == "404 Not Found\n"
