"""bench.load_fault's pure parts: the requests it writes, its latency summary and its /proc readings."""
from __future__ import annotations

import os
import subprocess
import sys

from bench.load_fault import SHORT_TEXTS, latency_summary, nif_request, request_head, rss_mib, worker_pids
from nif import parse_document


def test_its_requests_are_the_nif_gerbil_sends() -> None:
    text = 'He said "Hi" in C:\\Temp.'
    document = parse_document(nif_request(text, 7))
    assert document.text == text and not document.annotations
    assert document.uri == f"http://www.aksw.org/gerbil/NifWebService/request_7#char=0,{len(text)}"
    assert all(parse_document(nif_request(text)).text == text for text in SHORT_TEXTS)
    assert request_head(12).endswith(b"Content-Length: 12\r\n\r\n")


def test_latency_summary() -> None:
    assert latency_summary([]) == "n=0"
    assert latency_summary([0.1, 0.2, 0.3, 0.4]) == "n=4, p50 0.250 s, p95 0.385 s, max 0.400 s"


def test_worker_pids_and_rss_come_from_proc() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in worker_pids(os.getpid())
        assert rss_mib(os.getpid()) > 10  # this interpreter, with numpy loaded
    finally:
        child.kill()
        child.wait()
