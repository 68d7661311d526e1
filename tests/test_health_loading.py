"""The app answers while its linker loads: /health and every route say 503 until it is in, then /health says what
it serves, its counts as numbers."""
from __future__ import annotations

import logging
import threading

import pytest

from annotator.linking import EntityLinker
from annotator.pipeline.linker import Linker
from tests.support.dictionary_linker import DictionaryLinker
from tests.support.gerbil_requests import HEADERS, gerbil_request
from annotator.service import create_app


class CountingLinker(DictionaryLinker):
    def describe(self) -> dict[str, str | int | float]:
        return {"model": "counting-test-linker", "entities": len(self.table), "threshold": 0.05}


def test_health_is_503_while_loading_then_200_with_numbers(monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    loaded = threading.Event()

    def load_slowly(model_dir: str, **options: object) -> EntityLinker:
        loaded.wait(timeout=30)
        return CountingLinker()

    monkeypatch.setattr(Linker, "from_pretrained", load_slowly)  # what the app loads when it is given no linker
    app = create_app({"TESTING": True})  # returns while the linker loads
    client = app.test_client()

    response = client.get("/health")
    assert response.status_code == 503
    assert response.get_json() == {"status": "loading",
                                   "error": "the linker is still loading; retry when GET /health answers 200"}
    assert client.get("/health/live").status_code == 200  # the process answers: alive, not ready
    assert client.get("/health/ready").status_code == 503
    assert client.get("/health/ready").get_json()["status"] == "loading"
    response = client.post("/api/link", json={"text": "Paris"})
    assert response.status_code == 503 and "still loading" in response.get_json()["error"]
    response = client.post("/gerbil", data=gerbil_request("Paris"), headers=HEADERS)
    assert response.status_code == 503 and response.mimetype == "text/plain"
    assert response.text == "the linker is still loading; retry when GET /health answers 200\n"

    with caplog.at_level(logging.INFO, logger="annotator.service.loading"):
        loaded.set()
        assert app.extensions["entqa"].wait(timeout_s=10) == "ok"
    assert "linker ready after" in caplog.text
    response = client.get("/health")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "model": "counting-test-linker", "entities": 6, "threshold": 0.05}
    assert client.get("/health/ready").get_json() == {"status": "ready"}
    assert client.get("/health/live").get_json() == {"status": "live"}
    assert client.post("/api/link", json={"text": "Paris"}).get_json()["mentions"][0]["title"] == "Paris"


def test_a_failed_load_is_reported_by_health_and_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(model_dir: str, **options: object) -> EntityLinker:
        raise FileNotFoundError("no checkpoint in /nowhere")

    monkeypatch.setattr(Linker, "from_pretrained", fail)
    app = create_app({"TESTING": True})
    assert app.extensions["entqa"].wait(timeout_s=10) == "failed"
    client = app.test_client()
    response = client.get("/health")
    assert response.status_code == 503
    assert response.get_json() == {"status": "failed", "error": "the linker failed to load: FileNotFoundError: "
                                                                "no checkpoint in /nowhere"}
    assert client.post("/api/link", json={"text": "Paris"}).status_code == 503
