"""The endpoint under a real gunicorn started with the project's gunicorn.conf.py, on loopback."""
from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from nif import parse_document
from tests.support.dictionary_linker import DictionaryLinker
from tests.support.gerbil_requests import HEADERS, TRICKY_TEXT, gerbil_request, span_of
from bench.gunicorn_process import REPOSITORY as REPO, gunicorn_serving


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with gunicorn_serving("tests.support.wsgi_test_app:app") as (url, _, _):
        yield url


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str, bytes]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


@pytest.mark.slow  # starts gunicorn
def test_a2kb_through_gunicorn(server: str) -> None:
    status, content_type, body = _post(f"{server}/gerbil", gerbil_request(TRICKY_TEXT), HEADERS)
    assert (status, content_type) == (200, "application/x-turtle; charset=utf-8")
    answer = parse_document(body)
    assert answer.text == TRICKY_TEXT
    assert [(a.start, a.end) for a in answer.annotations] == [(m.start, m.end)
                                                               for m in DictionaryLinker().link(TRICKY_TEXT)]


@pytest.mark.slow  # starts gunicorn
def test_d2kb_through_gunicorn(server: str) -> None:
    spans = [span_of(TRICKY_TEXT, "東京"), span_of(TRICKY_TEXT, "Ada Lovelace")]
    status, _, body = _post(server + "/", gerbil_request(TRICKY_TEXT, spans), HEADERS)
    assert status == 200
    answer = parse_document(body)
    assert [(a.start, a.end, a.uris) for a in answer.annotations] == [
        (*spans[0], ("http://dbpedia.org/resource/Tokyo",)), (*spans[1], ("http://dbpedia.org/resource/Ada_Lovelace",))]


@pytest.mark.slow  # starts gunicorn
def test_bad_request_and_health_through_gunicorn(server: str) -> None:
    status, content_type, body = _post(server + "/", b"<a> <b> .", HEADERS)
    assert (status, content_type) == (400, "text/plain; charset=utf-8")
    assert body.decode().startswith("bad NIF: malformed turtle")
    with urllib.request.urlopen(f"{server}/health", timeout=10) as response:
        assert json.load(response)["status"] == "ok"


def test_config_file_settings() -> None:
    result = subprocess.run([sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--print-config",
                             "tests.support.wsgi_test_app:app"], cwd=REPO, capture_output=True, text=True,
                            timeout=60, check=True)
    settings = dict(map(str.strip, line.split("=", 1)) for line in result.stdout.splitlines() if "=" in line)
    assert settings["worker_class"] == "gthread"
    assert settings["preload_app"] == "False"
    assert int(settings["timeout"]) >= 600
    assert settings["workers"] == "1"


@pytest.mark.slow  # starts gunicorn with two workers
def test_metrics_sum_the_workers_and_the_log_names_request_ids(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from prometheus_client.parser import text_string_to_metric_families

    log = tmp_path / "gunicorn.log"
    with gunicorn_serving("tests.support.wsgi_test_app:app", env={"ENTQA_WORKERS": "2"}, log_path=log) as (url, _, _):
        for number in range(6):
            status, _, _ = _post(f"{url}/gerbil", gerbil_request("Paris"), {**HEADERS, "X-Request-Id": f"r{number}"})
            assert status == 200
        with urllib.request.urlopen(f"{url}/metrics", timeout=30) as response:
            families = text_string_to_metric_families(response.read().decode("utf-8"))
            served = sum(sample.value for family in families for sample in family.samples
                         if sample.name == "entqa_requests_total" and sample.labels["route"] == "/gerbil")
    assert served == 6  # whichever worker answered the scrape
    access = log.read_text(encoding="utf-8")
    assert all(f'" r{number}' in access or f" r{number}\n" in access for number in range(6))
