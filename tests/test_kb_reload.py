"""KB changes served without a restart: POST /api/kb/reload (behind ENTQA_ADMIN_TOKEN) and SIGHUP, through Flask's
test client, with a linker over a JSON table it can reload (TableFileLinker)."""
from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from openapi_spec_validator import validate

from annotator.linking import EntityLinker
from annotator.pipeline.linker import Linker
from tests.support.dictionary_linker import DictionaryLinker
from tests.support.table_file_linker import TableFileLinker, write_table
from annotator.service import create_app
from annotator.service.reloading import HUP_FORWARDING_VARIABLE, reload_on_hangup

TOKEN = "s3cret-Token_42"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
OLD = {"Paris": "Paris", "London": "London"}
NEW = {"Paris": "Paris, Texas", "Lyon": "Lyon"}


@pytest.fixture
def table(tmp_path: Path) -> Path:
    return write_table(tmp_path / "table.json", OLD)


@pytest.fixture
def app(table: Path) -> Flask:
    return create_app({"TESTING": True, "ADMIN_TOKEN": TOKEN}, linker=TableFileLinker(table))


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def titles(client: FlaskClient, text: str = "Paris, London and Lyon") -> list[str]:
    response = client.post("/api/link", json={"text": text})
    assert response.status_code == 200
    return [mention["title"] for mention in response.get_json()["mentions"]]


def wait_for(condition: Callable[[], bool], timeout_s: float = 10) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_the_route_is_off_without_a_token(table: Path) -> None:
    client = create_app({"TESTING": True}, linker=TableFileLinker(table)).test_client()
    response = client.post("/api/kb/reload", headers=BEARER)
    assert response.status_code == 404
    assert response.get_json() == {"error": "POST /api/kb/reload is off: set ENTQA_ADMIN_TOKEN to turn it on"}
    client = create_app({"TESTING": True, "ADMIN_TOKEN": ""}, linker=TableFileLinker(table)).test_client()
    assert client.post("/api/kb/reload", headers=BEARER).status_code == 404


@pytest.mark.parametrize("authorization", [None, "", "Bearer", "Bearer  ", f"Basic {TOKEN}", TOKEN])
def test_no_bearer_token_is_401_with_its_challenge(client: FlaskClient, authorization: str | None) -> None:
    response = client.post("/api/kb/reload", headers={} if authorization is None else {"Authorization": authorization})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert "ENTQA_ADMIN_TOKEN" in response.get_json()["error"]
    assert titles(client) == ["Paris", "London"]


@pytest.mark.parametrize("token", [TOKEN[:-1], TOKEN + "x", TOKEN.lower(), "wrong", "é" * 5])
def test_a_wrong_token_is_403(client: FlaskClient, token: str) -> None:
    response = client.post("/api/kb/reload", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 403 and response.get_json() == {"error": "the admin token is wrong"}


def test_the_right_token_reloads_and_the_new_kb_answers(client: FlaskClient, table: Path) -> None:
    assert titles(client) == ["Paris", "London"]
    before = client.get("/health").get_json()
    write_table(table, NEW)
    assert titles(client) == ["Paris", "London"]  # nothing changes until the reload
    response = client.post("/api/kb/reload", headers={"Authorization": f"bearer  {TOKEN} "})
    assert response.status_code == 200
    answer = response.get_json()
    assert set(answer) == {"served", "seconds", "other_workers_signalled"}
    assert answer["served"]["entities"] == 2 and answer["served"]["kb_changes"] != before["kb_changes"]
    assert answer["served"] == TableFileLinker(table).describe()
    assert isinstance(answer["seconds"], float) and answer["other_workers_signalled"] is False
    assert titles(client) == ["Paris, Texas", "Lyon"]
    health = client.get("/health").get_json()
    assert health == {"status": "ok", **answer["served"]}


def test_the_token_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch, table: Path) -> None:
    monkeypatch.setenv("ENTQA_ADMIN_TOKEN", TOKEN)
    client = create_app({"TESTING": True}, linker=TableFileLinker(table)).test_client()
    assert client.post("/api/kb/reload", headers=BEARER).status_code == 200
    monkeypatch.setenv("ENTQA_ADMIN_TOKEN", "12345")  # JSON: a number
    with pytest.raises(ValueError, match="ENTQA_ADMIN_TOKEN reads as JSON int, not text"):
        create_app({"TESTING": True}, linker=TableFileLinker(table))
    with pytest.raises(ValueError, match="white space"):
        create_app({"TESTING": True, "ADMIN_TOKEN": "two words"}, linker=TableFileLinker(table))


def test_a_failed_reload_says_why_and_the_old_kb_goes_on_serving(client: FlaskClient, table: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    before = client.get("/health").get_json()
    table.write_text("{not json", encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="annotator.service.reloading"):
        response = client.post("/api/kb/reload", headers=BEARER)
    assert response.status_code == 500
    error = response.get_json()["error"]
    assert error.startswith(f"the KB could not be reloaded: KBFormatError: {table} is not a JSON table")
    assert error.endswith("; the previous KB is still served")
    assert "KB reload (POST /api/kb/reload) failed" in caplog.text and "is not a JSON table" in caplog.text
    assert "Traceback" not in caplog.text  # the reason says it all
    assert titles(client) == ["Paris", "London"] and client.get("/health").get_json() == before
    write_table(table, NEW)
    assert client.post("/api/kb/reload", headers=BEARER).status_code == 200
    assert titles(client) == ["Paris, Texas", "Lyon"]


def test_a_linker_that_cannot_reload_is_501() -> None:
    client = create_app({"TESTING": True, "ADMIN_TOKEN": TOKEN}, linker=DictionaryLinker()).test_client()
    response = client.post("/api/kb/reload", headers=BEARER)
    assert response.status_code == 501
    assert response.get_json() == {"error": "the served linker (DictionaryLinker) cannot reload its KB; restart the "
                                            "service to serve a changed KB"}
    assert titles(client, "Paris") == ["Paris"]


def test_a_linker_still_loading_is_503(monkeypatch: pytest.MonkeyPatch, table: Path) -> None:
    loaded = threading.Event()

    def load_slowly(model_dir: str, **options: object) -> EntityLinker:
        loaded.wait(timeout=30)
        return TableFileLinker(table)

    monkeypatch.setattr(Linker, "from_pretrained", load_slowly)  # what the app loads when it is given no linker
    app = create_app({"TESTING": True, "ADMIN_TOKEN": TOKEN})
    client = app.test_client()
    assert client.post("/api/kb/reload").status_code == 401  # the token first
    response = client.post("/api/kb/reload", headers=BEARER)
    assert response.status_code == 503 and "still loading" in response.get_json()["error"]
    loaded.set()
    assert app.extensions["entqa"].wait(timeout_s=10) == "ok"
    assert client.post("/api/kb/reload", headers=BEARER).status_code == 200


def test_under_gunicorn_the_master_is_signalled_only_when_it_forwards_sighup(
        client: FlaskClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda pid, number: sent.append((pid, number)))
    gunicorn = {"SERVER_SOFTWARE": "gunicorn/27.0.1"}
    answer = client.post("/api/kb/reload", headers=BEARER, environ_base=gunicorn).get_json()
    assert answer["other_workers_signalled"] is False and sent == []  # a master that would restart its workers
    assert "without the project's gunicorn.conf.py" in caplog.text
    monkeypatch.setenv(HUP_FORWARDING_VARIABLE, str(os.getppid()))
    answer = client.post("/api/kb/reload", headers=BEARER, environ_base=gunicorn).get_json()
    assert answer["other_workers_signalled"] is True and sent == [(os.getppid(), signal.SIGHUP)]
    assert client.post("/api/kb/reload", headers=BEARER).get_json()["other_workers_signalled"] is False  # no gunicorn
    assert len(sent) == 1


def test_the_openapi_description_has_the_route_and_its_bearer_token(client: FlaskClient) -> None:
    description = client.get("/openapi.json").get_json()
    validate(description)
    route = description["paths"]["/api/kb/reload"]["post"]
    assert route["security"] == [{"adminToken": []}]
    assert description["components"]["securitySchemes"]["adminToken"]["scheme"] == "bearer"
    assert {"200", "401", "403", "404", "500", "501", "503"} <= set(route["responses"])
    assert set(description["components"]["schemas"]["KbReloadResponse"]["required"]) == {
        "served", "seconds", "other_workers_signalled"}


def served_changes(app: Flask) -> Any:
    return app.extensions["entqa"].linker().describe()["kb_changes"]


def test_sighup_reloads_the_kb_while_the_process_goes_on(app: Flask, table: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    client = app.test_client()
    before = served_changes(app)
    write_table(table, NEW)
    with caplog.at_level(logging.INFO, logger="annotator.service.reloading"):
        os.kill(os.getpid(), signal.SIGHUP)
        assert wait_for(lambda: served_changes(app) != before)
        assert wait_for(lambda: "KB reloaded (SIGHUP)" in caplog.text)
    assert titles(client) == ["Paris, Texas", "Lyon"]
    assert app.extensions["entqa"].linker().describe() == TableFileLinker(table).describe()


def test_a_sighup_reload_that_fails_is_logged_and_the_old_kb_serves(app: Flask, table: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    before = served_changes(app)
    table.write_text("[]]", encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="annotator.service.reloading"):
        os.kill(os.getpid(), signal.SIGHUP)
        assert wait_for(lambda: "KB reload (SIGHUP) failed" in caplog.text)
    assert "the previous KB is still served" in caplog.text
    assert served_changes(app) == before and titles(app.test_client()) == ["Paris", "London"]


def test_sighup_during_the_loading_reloads_once_the_linker_is_in(monkeypatch: pytest.MonkeyPatch, table: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    loaded = threading.Event()
    first = TableFileLinker(table)  # read before the change

    def load_slowly(model_dir: str, **options: object) -> EntityLinker:
        loaded.wait(timeout=30)
        return first

    monkeypatch.setattr(Linker, "from_pretrained", load_slowly)  # what the app loads when it is given no linker
    app = create_app({"TESTING": True})
    write_table(table, NEW)
    with caplog.at_level(logging.INFO, logger="annotator.service.reloading"):
        os.kill(os.getpid(), signal.SIGHUP)
        assert wait_for(lambda: "still loading" in caplog.text)
        loaded.set()
        assert wait_for(lambda: "KB reloaded (SIGHUP)" in caplog.text)
    assert served_changes(app) == TableFileLinker(table).digest != first.digest


def test_an_app_created_off_the_main_thread_leaves_sighup_alone(table: Path) -> None:
    before = signal.getsignal(signal.SIGHUP)
    installed: list[bool] = []
    thread = threading.Thread(target=lambda: installed.append(reload_on_hangup(
        create_app({"TESTING": True}, linker=TableFileLinker(table)).extensions["entqa"])))
    thread.start()
    thread.join(timeout=30)
    assert installed == [False] and signal.getsignal(signal.SIGHUP) is before
    create_app({"TESTING": True}, linker=TableFileLinker(table))
    assert signal.getsignal(signal.SIGHUP) is not before
