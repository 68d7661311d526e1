"""KB reloads under a real gunicorn with the project's gunicorn.conf.py and two workers: SIGHUP to the master and
POST /api/kb/reload reach every worker, none of them restarted."""
from __future__ import annotations

import json
import re
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bench.gunicorn_process import gunicorn_serving
from tests.support.table_file_linker import TableFileLinker, write_table

TOKEN = "gunicorn-test-token"


def _reload(url: str, token: str) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(f"{url}/api/kb/reload", method="POST",
                                     headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def _reloads(log: Path, cause: str, digest: str, workers: int, timeout_s: float = 20) -> set[int]:
    """The worker pids that logged a reload for `cause` to the table of `digest`, once `workers` of them did."""
    pattern = re.compile(rf"\[(\d+)\] \[INFO\] \[-\] annotator\.service\.reloading: KB reloaded "
                         rf"\({re.escape(cause)}\).*'kb_changes': '{digest}'")
    deadline = time.monotonic() + timeout_s
    while True:
        pids = {int(pid) for pid in pattern.findall(log.read_text(encoding="utf-8", errors="replace"))}
        if len(pids) >= workers or time.monotonic() > deadline:
            return pids
        time.sleep(0.1)


@pytest.mark.slow  # starts gunicorn with two workers
def test_sighup_and_the_admin_route_reload_every_worker_without_restarting_them(tmp_path: Path) -> None:
    table = write_table(tmp_path / "table.json", {"Paris": "Paris"})
    log = tmp_path / "gunicorn.log"
    env = {"ENTQA_WORKERS": "2", "ENTQA_ADMIN_TOKEN": TOKEN, "TABLE_LINKER_PATH": str(table)}
    with gunicorn_serving("tests.support.wsgi_reload_app:app", env=env, log_path=log) as (url, _, master):
        # /health answered once one worker was in: the other's app (and its SIGHUP handler) may still be on its way
        deadline = time.monotonic() + 30
        while len(booted := re.findall(r"worker (\d+) answering", log.read_text(encoding="utf-8"))) < 2:
            assert time.monotonic() < deadline, "the second worker did not start"
            time.sleep(0.1)

        write_table(table, {"Paris": "Paris, Texas", "Lyon": "Lyon"})
        master.send_signal(signal.SIGHUP)
        assert _reloads(log, "SIGHUP", TableFileLinker(table).digest, 2) == set(map(int, booted))

        write_table(table, {"Lyon": "Lyon"})
        assert _reload(url, "wrong")[0] == 403
        status, answer = _reload(url, TOKEN)
        assert status == 200 and answer["other_workers_signalled"] is True
        served = answer["served"]
        assert isinstance(served, dict) and served["kb_changes"] == TableFileLinker(table).digest
        assert served["process"] in map(int, booted)
        assert _reloads(log, "SIGHUP", TableFileLinker(table).digest, 2) == set(map(int, booted))

        table.write_text("{", encoding="utf-8")
        status, answer = _reload(url, TOKEN)
        assert status == 500 and str(answer["error"]).endswith("the previous KB is still served")
        link = urllib.request.Request(f"{url}/api/link", data=json.dumps({"text": "Lyon and Paris"}).encode(),
                                      headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(link, timeout=30) as response:  # the table before the broken one
            assert [mention["title"] for mention in json.load(response)["mentions"]] == ["Lyon"]
        text = log.read_text(encoding="utf-8")
        assert "SIGHUP forwarded to worker(s)" in text and "Hang up" not in text  # gunicorn's restart: not run
        assert len(re.findall(r"Booting worker with pid", text)) == 2 and master.poll() is None
