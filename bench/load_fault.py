"""Bench: the service under load and faults, through a real gunicorn (the project's gunicorn.conf.py) on loopback.

One server on the embedded KB, then phases 1-3 twice (the second round shows whether memory keeps growing) and phase 4,
each bounded in requests and time:

1. load: `--clients` concurrent clients each send `--docs` short A2KB documents, one after another, while a
   prober asks /health every 0.25 s;
2. stall: `--stalled` clients send half a body and then nothing, while /health is probed and one client sends
   documents; the stalled ones should get a 408 after ENTQA_BODY_TIMEOUT (`--body-timeout`);
3. disconnect: `--disconnects` clients send a whole document and close at once, as many send half a body and
   close; a document sent right after must be answered in about one document's time (the vanished ones are
   dropped by the linker thread, or never started);
4. kill: a longer document in flight, the worker is killed (SIGKILL); gunicorn starts another, and the time
   from the kill to the next answered document is the recovery;
5. the server is stopped.

Printed: errors (answers other than 200 where a 200 was due), document latency p50/p95, /health latency under load
and during the stall, what the stalled and vanished clients got, worker RSS after start-up, after the phases and
of the replacement worker, and the recovery time. Figures are printed, never asserted.

    python -m bench.load_fault --clients 8 --docs 4
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.gunicorn_process import REPOSITORY, gunicorn_serving, read_until_closed

EMBEDDED_KB = REPOSITORY / "models" / "entqa-minilm" / "kb" / "entities.jsonl.gz"
HEADERS = {"Content-Type": "application/x-turtle;charset=UTF-8", "Accept": "application/x-turtle"}
HEALTH_EVERY_S = 0.25
REQUEST_TIMEOUT_S = 300

SHORT_TEXTS = (
    "Bill Clinton met Nelson Mandela in Pretoria. Mandela thanked Clinton for his support.",
    "Germany beat Argentina in the final in Rio de Janeiro.",
    "Angela Merkel spoke in Berlin about the European Union.",
    "Microsoft and Apple reported results on Wall Street.",
    "The Yankees lost to the Red Sox at Fenway Park in Boston.",
    "Tony Blair flew from London to Washington to see George Bush.",
    "Roger Federer won Wimbledon for the fifth time.",
    "The United Nations met in New York to discuss Iraq.",
)


def nif_request(text: str, number: int = 0) -> bytes:
    """An A2KB request in the shape GERBIL sends."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    context = f"<http://www.aksw.org/gerbil/NifWebService/request_{number}#char=0,{len(text)}>"
    return (
        "@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        f"{context} a nif:Context , nif:String , nif:RFC5147String ;\n"
        f'    nif:beginIndex "0"^^xsd:nonNegativeInteger ; nif:endIndex "{len(text)}"^^xsd:nonNegativeInteger ;\n'
        f'    nif:isString "{escaped}"^^xsd:string .\n').encode("utf-8")


def request_head(body_length: int) -> bytes:
    """The head of a POST /gerbil with a body of `body_length` bytes, for clients written on raw sockets."""
    return (f"POST /gerbil HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-turtle\r\n"
            f"Content-Length: {body_length}\r\n\r\n").encode("ascii")


def latency_summary(seconds: Sequence[float]) -> str:
    """'n=…, p50 … s, p95 … s, max … s' of some latencies ('n=0' for none)."""
    if not seconds:
        return "n=0"
    p50, p95 = np.percentile(seconds, [50, 95])
    return f"n={len(seconds)}, p50 {p50:.3f} s, p95 {p95:.3f} s, max {max(seconds):.3f} s"


def single_latency(outcome: Outcome) -> str:
    """The latency of an outcome's one request, or what it got instead of a 200."""
    return f"{outcome.latencies[0]:.3f} s" if outcome.latencies else f"no 200 ({'; '.join(outcome.failures)})"


def worker_pids(master_pid: int) -> list[int]:
    """The gunicorn master's child processes (its workers), from /proc."""
    children = Path(f"/proc/{master_pid}/task/{master_pid}/children")
    return [int(pid) for pid in children.read_text().split()] if children.exists() else []


def rss_mib(pid: int) -> float:
    """Resident memory of a process, MiB."""
    match = re.search(r"^VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.MULTILINE)
    if match is None:
        raise ValueError(f"no VmRSS for process {pid}")
    return int(match.group(1)) / 1024


@dataclass
class Outcome:
    """What one kind of request got: latencies of the 200s and the other answers, as 'status reason' lines."""

    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, started: float, status: int, reason: str = "") -> None:
        with self.lock:
            if status == 200:
                self.latencies.append(time.monotonic() - started)
            else:
                self.failures.append(f"{status} {reason}".strip())


def post_document(url: str, body: bytes, outcome: Outcome) -> None:
    started = time.monotonic()
    request = urllib.request.Request(f"{url}/gerbil", data=body, headers=HEADERS, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
            response.read()
            outcome.record(started, response.status)
    except urllib.error.HTTPError as error:
        outcome.record(started, error.code, error.read().decode(errors="replace").strip())
    except OSError as error:
        outcome.record(started, 0, f"{type(error).__name__}: {error}")


def get_health(url: str, outcome: Outcome) -> None:
    started = time.monotonic()
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=30) as response:
            response.read()
            outcome.record(started, response.status)
    except (urllib.error.HTTPError, OSError) as error:
        outcome.record(started, getattr(error, "code", 0), str(error))


@contextmanager
def probing(action: Callable[[], None], every_s: float) -> Iterator[None]:
    """Runs `action` every `every_s` seconds on a thread of its own while the block runs."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            action()
            stop.wait(every_s)

    prober = threading.Thread(target=loop, daemon=True)
    prober.start()
    try:
        yield
    finally:
        stop.set()
        prober.join()


def read_answer(connection: socket.socket) -> str:
    """The status line of what the server answers on `connection` (until it closes or times out)."""
    return read_until_closed(connection).split(b"\r\n", 1)[0].decode(errors="replace") or "(nothing)"


def load_phase(url: str, clients: int, docs: int, errors: list[str]) -> None:
    documents, health = Outcome(), Outcome()
    with probing(lambda: get_health(url, health), HEALTH_EVERY_S), ThreadPoolExecutor(clients) as pool:
        for client in range(clients):
            bodies = [nif_request(SHORT_TEXTS[(client + i) % len(SHORT_TEXTS)], client * docs + i) for i in range(docs)]
            pool.submit(lambda bodies=bodies: [post_document(url, body, documents) for body in bodies])
    print(f"load: {clients} clients x {docs} documents: {latency_summary(documents.latencies)}; "
          f"errors {len(documents.failures)}")
    print(f"load: /health {latency_summary(health.latencies)}; errors {len(health.failures)}")
    errors += documents.failures + health.failures


def stall_phase(url: str, port: int, stalled: int, body_timeout_s: float, errors: list[str]) -> None:
    body = nif_request(SHORT_TEXTS[0])
    connections = [socket.create_connection(("127.0.0.1", port), timeout=body_timeout_s + 30) for _ in range(stalled)]
    documents, health = Outcome(), Outcome()
    try:
        for connection in connections:
            connection.sendall(request_head(len(body)) + body[:len(body) // 2])
        time.sleep(0.5)  # the stalled bodies are being read now
        with probing(lambda: get_health(url, health), HEALTH_EVERY_S):
            for text in SHORT_TEXTS[:4]:
                post_document(url, nif_request(text), documents)
            answers = [read_answer(connection) for connection in connections]
    finally:
        for connection in connections:
            connection.close()
    print(f"stall: {stalled} clients stopped half-way through their bodies; they got: {answers}")
    print(f"stall: meanwhile documents {latency_summary(documents.latencies)}; errors {len(documents.failures)}")
    print(f"stall: meanwhile /health {latency_summary(health.latencies)}; errors {len(health.failures)}")
    errors += documents.failures + health.failures


def disconnect_phase(url: str, port: int, disconnects: int, errors: list[str]) -> None:
    body = nif_request(" ".join(SHORT_TEXTS))
    for whole in (True, False):
        for _ in range(disconnects):
            with socket.create_connection(("127.0.0.1", port)) as connection:
                connection.sendall(request_head(len(body)) + (body if whole else body[:len(body) // 2]))
    time.sleep(0.1)
    alone, after = Outcome(), Outcome()
    post_document(url, body, after)  # the vanished clients' documents are dropped, not linked before it
    post_document(url, body, alone)  # the same document with nothing ahead of it
    print(f"disconnect: {disconnects} clients closed after a whole body, {disconnects} half-way through one; "
          f"the next document took {single_latency(after)}, the same one alone {single_latency(alone)}")
    errors += after.failures + alone.failures


def kill_phase(url: str, master_pid: int, startup_timeout_s: float, errors: list[str]) -> None:
    [worker] = worker_pids(master_pid)
    in_flight = Outcome()
    with ThreadPoolExecutor(1) as pool:
        pool.submit(post_document, url, nif_request(" ".join(SHORT_TEXTS * 3)), in_flight)
        time.sleep(1.0)
        killed = time.monotonic()
        os.kill(worker, signal.SIGKILL)
    recovered, health = Outcome(), Outcome()
    while not health.latencies and time.monotonic() - killed < startup_timeout_s:
        get_health(url, health)
    health_s = time.monotonic() - killed
    post_document(url, nif_request(SHORT_TEXTS[0]), recovered)
    recovery_s = time.monotonic() - killed
    replacements = worker_pids(master_pid)
    print(f"kill: SIGKILL to worker {worker} with a document in flight (its client got: "
          f"{in_flight.failures or ['200']}); new worker {replacements}, /health after {health_s:.1f} s, "
          f"first document answered {recovery_s:.1f} s after the kill (recovery)")
    if replacements:
        print(f"kill: replacement worker RSS {rss_mib(replacements[0]):.0f} MiB")
    errors += recovered.failures


def run(*, clients: int, docs: int, stalled: int, disconnects: int, body_timeout_s: float,
        startup_timeout_s: float) -> int:
    """Runs the phases against a fresh server; returns the number of errors."""
    env = {"ENTQA_KB_PATH": str(EMBEDDED_KB), "ENTQA_BODY_TIMEOUT": f"{body_timeout_s:g}"}
    errors: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        log_path = Path(scratch) / "gunicorn.log"
        started = time.monotonic()
        with gunicorn_serving(env=env, log_path=log_path, startup_timeout_s=startup_timeout_s) as server:
            url, port = server.url, server.port
            [worker] = worker_pids(server.process.pid)
            print(f"server: gunicorn -c gunicorn.conf.py --bind 127.0.0.1:{port} wsgi:app "
                  f"(ENTQA_BODY_TIMEOUT={body_timeout_s:g}, embedded KB); "
                  f"up in {time.monotonic() - started:.1f} s; worker {worker} RSS {rss_mib(worker):.0f} MiB")
            for repeat in (1, 2):  # the second round shows whether memory keeps growing
                load_phase(url, clients, docs, errors)
                stall_phase(url, port, stalled, body_timeout_s, errors)
                disconnect_phase(url, port, disconnects, errors)
                print(f"memory: worker RSS after round {repeat} (load, stall, disconnects) {rss_mib(worker):.0f} MiB")
            kill_phase(url, server.process.pid, startup_timeout_s, errors)
        dropped = len(re.findall(r'"POST /gerbil HTTP/1.1" 503 ', log_path.read_text(errors="replace")))
    print(f"server log: {dropped} documents answered 503 (dropped for a client that went away)")
    print(f"errors: {len(errors)}" + "".join(f"\n  {error}" for error in errors))
    return len(errors)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.load_fault", description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients in the load phase")
    parser.add_argument("--docs", type=int, default=4, help="documents per client in the load phase")
    parser.add_argument("--stalled", type=int, default=2, help="clients that stop half-way through their bodies")
    parser.add_argument("--disconnects", type=int, default=3,
                        help="clients that close after a whole body (as many again half-way through one)")
    parser.add_argument("--body-timeout", type=float, default=5.0, help="ENTQA_BODY_TIMEOUT for the server, s")
    parser.add_argument("--startup-timeout", type=float, default=300.0, help="longest wait for a worker's model, s")
    args = parser.parse_args(argv)
    run(clients=args.clients, docs=args.docs, stalled=args.stalled, disconnects=args.disconnects,
        body_timeout_s=args.body_timeout, startup_timeout_s=args.startup_timeout)


if __name__ == "__main__":
    main()
