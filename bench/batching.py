"""Bench: batching across requests in the service, on against off, through real gunicorn servers on loopback.

One server per mode (the project's gunicorn.conf.py, embedded KB, confidences written), all started at once: `off`
(ENTQA_BATCH_DOCUMENTS=1) and, for each `--wait-ms`, batches of up to `--batch-documents`. Each text is sent to
every server once first (warm-up; the `off` answers are the reference). Then for 1, 4 and 8 concurrent clients
(`--clients`), each sending `--docs` short made-up news texts one after another, the modes take turns (round 1: off,
on, ...; round 2 the same again), so that the shared machine's load falls on all of them alike.

Printed per mode and client count: documents/s and latency p50/p95 summed over the rounds, and their ratios to
`off`; then how many answers and links (span + URI) differ from the unbatched reference and the largest score
difference of a link both have (int8 scales activations per batch, so scores may move in the last digits).
Then one client sending all the texts in one `POST /api/link/batch`, `--rounds` times per mode in turn: its
documents/s, and its answers against `off`'s, where the same request's documents are linked one by one.
Figures are printed, never asserted.

    python -m bench.batching --clients 1 4 8 --docs 6 --rounds 2
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.gunicorn_process import gunicorn_serving
from bench.load_fault import EMBEDDED_KB, HEADERS, REQUEST_TIMEOUT_S, SHORT_TEXTS, nif_request
from nif import parse_document

# Made up, news-like (no dataset text): the load bench's eight and four more.
TEXTS = SHORT_TEXTS + (
    "Barack Obama visited Nairobi and met Uhuru Kenyatta before flying to Addis Ababa.",
    "Liverpool drew with Chelsea at Anfield; Manchester United beat Arsenal in London.",
    "Shares of Toyota fell in Tokyo after the Bank of Japan left interest rates unchanged.",
    "Vladimir Putin and Emmanuel Macron talked about Ukraine by telephone from Moscow and Paris.",
)

Link = tuple[int, int, str]  # start, end, URI


@dataclass(frozen=True)
class Mode:
    """One server's batching settings."""

    name: str
    documents: int
    wait_ms: float

    def env(self) -> dict[str, str]:
        return {"ENTQA_BATCH_DOCUMENTS": str(self.documents), "ENTQA_BATCH_WAIT_MS": f"{self.wait_ms:g}"}


@dataclass
class Tally:
    """What one mode got at one client count, over all rounds."""

    seconds: float = 0.0  # wall time of the rounds
    latencies: list[float] = field(default_factory=list)
    answers: list[tuple[str, dict[Link, float]]] = field(default_factory=list)  # (text, link → score)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def linked(answer: bytes) -> dict[Link, float]:
    """Every (start, end, URI) of a NIF answer, with its confidence."""
    document = parse_document(answer)
    return {(a.start, a.end, uri): a.confidence or 0.0 for a in document.annotations for uri in a.uris}


def batch_request(url: str, tally: Tally) -> None:
    """All `TEXTS` in one POST /api/link/batch; its answers as (text, link → score)."""
    body = json.dumps({"documents": [{"text": text} for text in TEXTS]}).encode()
    request = urllib.request.Request(f"{url}/api/link/batch", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
        answers = json.load(response)["documents"]
    tally.seconds += time.monotonic() - started
    tally.latencies.append(time.monotonic() - started)
    tally.answers.extend((text, {(m["start"], m["end"], m["uri"]): m["score"] for m in answer["mentions"]})
                         for text, answer in zip(TEXTS, answers))


def post(url: str, text: str) -> bytes:
    request = urllib.request.Request(f"{url}/gerbil", data=nif_request(text), headers=HEADERS, method="POST")
    with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
        return bytes(response.read())


def client_load(url: str, clients: int, docs: int, tally: Tally) -> None:
    """`clients` concurrent clients, each sending `docs` texts one after another (each starting at another text)."""
    def client(number: int) -> None:
        for i in range(docs):
            text = TEXTS[(number * docs + i) % len(TEXTS)]
            started = time.monotonic()
            try:
                answer = post(url, text)
            except OSError as error:
                with tally.lock:
                    tally.failures.append(f"{type(error).__name__}: {error}")
                continue
            with tally.lock:
                tally.latencies.append(time.monotonic() - started)
                tally.answers.append((text, linked(answer)))

    started = time.monotonic()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    tally.seconds += time.monotonic() - started


@contextmanager
def serving(mode: Mode, scratch: Path, startup_timeout_s: float) -> Iterator[str]:
    """The base URL of a gunicorn server in `mode` on the embedded KB, until the block ends."""
    env = {"ENTQA_KB_PATH": str(EMBEDDED_KB), "ENTQA_WITH_CONFIDENCE": "true", **mode.env()}
    with gunicorn_serving(env=env, log_path=scratch / f"{mode.name}.log", startup_timeout_s=startup_timeout_s) as server:
        yield server.url


def differences(reference: dict[str, dict[Link, float]], answers: Sequence[tuple[str, dict[Link, float]]]) -> str:
    """How the answers differ from the reference answer of the same text: answers, links, largest score change."""
    answers_differing = links_differing = 0
    score_change = 0.0
    for text, links in answers:
        expected = reference[text]
        differing = len(links.keys() ^ expected.keys())
        answers_differing += differing > 0
        links_differing += differing
        score_change = max([score_change] + [abs(links[link] - expected[link]) for link in links.keys() & expected.keys()])
    total = sum(len(links) for _, links in answers)
    return (f"{answers_differing}/{len(answers)} answers and {links_differing}/{total} links differ; "
            f"largest score change {score_change:.2e}")


def run(*, modes: Sequence[Mode], clients: Sequence[int], docs: int, rounds: int, startup_timeout_s: float) -> None:
    with tempfile.TemporaryDirectory() as scratch, ExitStack() as servers:
        started = time.monotonic()
        urls = {mode: servers.enter_context(serving(mode, Path(scratch), startup_timeout_s)) for mode in modes}
        print(f"servers: {', '.join(f'{m.name} (ENTQA_BATCH_DOCUMENTS={m.documents}, ENTQA_BATCH_WAIT_MS={m.wait_ms:g})' for m in modes)}; "
              f"embedded KB; up in {time.monotonic() - started:.1f} s; load average {os.getloadavg()[0]:.1f}")
        reference = {text: linked(post(urls[modes[0]], text)) for text in TEXTS}
        for mode in modes[1:]:
            for text in TEXTS:
                post(urls[mode], text)  # warm-up
        tallies = {(mode, n): Tally() for mode in modes for n in clients}
        for n in clients:
            for _ in range(rounds):
                for mode in modes:  # interleaved: the machine's load falls on every mode alike
                    client_load(urls[mode], n, docs, tallies[mode, n])
        batches = {mode: Tally() for mode in modes}
        for _ in range(rounds):
            for mode in modes:
                batch_request(urls[mode], batches[mode])
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"{'mode':<16}{'clients':>8}{'docs':>6}{'docs/s':>8}{'p50 s':>8}{'p95 s':>8}"
          f"{'docs/s vs off':>15}{'p50 vs off':>12}{'p95 vs off':>12}")
    for n in clients:
        base = tallies[modes[0], n]
        base_rate, (base_p50, base_p95) = len(base.latencies) / base.seconds, np.percentile(base.latencies, [50, 95])
        for mode in modes:
            tally = tallies[mode, n]
            rate, (p50, p95) = len(tally.latencies) / tally.seconds, np.percentile(tally.latencies, [50, 95])
            print(f"{mode.name:<16}{n:>8}{len(tally.latencies):>6}{rate:>8.2f}{p50:>8.2f}{p95:>8.2f}"
                  f"{rate / base_rate:>15.2f}{p50 / base_p50:>12.2f}{p95 / base_p95:>12.2f}")
    for mode in modes:
        answers = [answer for n in clients for answer in tallies[mode, n].answers]
        failures = [failure for n in clients for failure in tallies[mode, n].failures]
        print(f"{mode.name}: against the unbatched warm-up answers, {differences(reference, answers)}; "
              f"failures {len(failures)}" + "".join(f"\n  {failure}" for failure in failures[:5]))
    batch_reference = dict(batches[modes[0]].answers[:len(TEXTS)])
    for mode in modes:
        tally = batches[mode]
        print(f"{mode.name}: {len(TEXTS)} texts in one POST /api/link/batch, {rounds} times: "
              f"{len(tally.answers) / tally.seconds:.2f} docs/s, {np.mean(tally.latencies):.2f} s per request; "
              f"against off's first answer, {differences(batch_reference, tally.answers)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.batching", description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 8], help="concurrent clients, in turn")
    parser.add_argument("--docs", type=int, default=6, help="documents per client per round")
    parser.add_argument("--rounds", type=int, default=2, help="turns of every mode at each client count")
    parser.add_argument("--batch-documents", type=int, default=8, help="ENTQA_BATCH_DOCUMENTS when on")
    parser.add_argument("--wait-ms", type=float, nargs="+", default=[0.0, 20.0],
                        help="ENTQA_BATCH_WAIT_MS of each batching server")
    parser.add_argument("--startup-timeout", type=float, default=300.0, help="longest wait for a worker's model, s")
    args = parser.parse_args(argv)
    modes = [Mode("off", 1, 0)] + [Mode(f"on, wait {w:g} ms", args.batch_documents, w) for w in args.wait_ms]
    run(modes=modes, clients=args.clients, docs=args.docs, rounds=args.rounds, startup_timeout_s=args.startup_timeout)


if __name__ == "__main__":
    main()
