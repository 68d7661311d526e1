"""Bench: the service overloaded, through a real gunicorn (the project's gunicorn.conf.py) on loopback.

`--clients` clients each send short JSON documents to `/api/link` one after another for `--seconds`; a client
refused with 503 waits the `Retry-After` it was given (at most `--max-wait` s) and sends again. Meanwhile the
worker's resident memory is read every second. When the load stops, one more document is sent every half second
until it is answered (at most 300 s): the time from the end of the load to that answer is the recovery. Printed: the answers by
status, whether every 503 carried `Retry-After`, the latency of the admitted documents (p50, p99, max), memory at
start, peak and end, and the recovery. Figures are printed, never asserted.

    python -m bench.overload --clients 64 --seconds 120 --env ENTQA_KB_PATH=models/entqa-minilm/kb/entities.jsonl.gz
"""
from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.gunicorn_process import gunicorn_serving

RECOVERY_LIMIT_S = 300  # past this without an answer the service did not recover: reported as such
TEXTS = ("Ajax Amsterdam signed a striker from Brazil.", "Angela Merkel met Emmanuel Macron in Berlin.",
         "The Yankees beat the Red Sox at Fenway Park.", "Toyota opened a plant in Kentucky.")


@dataclass
class Tally:
    """What the clients got, shared between their threads."""

    statuses: Counter[int] = field(default_factory=Counter)
    admitted_s: list[float] = field(default_factory=list)
    without_retry_after: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def post(url: str, text: str, timeout_s: float = 660) -> tuple[int, float, str | None]:
    """(status, seconds, Retry-After) of one /api/link call; status 0 when the connection failed."""
    request = urllib.request.Request(f"{url}/api/link", data=json.dumps({"text": text}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            response.read()
            return response.status, time.monotonic() - started, None
    except urllib.error.HTTPError as error:
        return error.code, time.monotonic() - started, error.headers.get("Retry-After")
    except OSError:
        return 0, time.monotonic() - started, None


def client(url: str, until: float, tally: Tally, number: int, max_wait_s: float) -> None:
    sent = 0
    while time.monotonic() < until:
        status, seconds, retry_after = post(url, TEXTS[(number + sent) % len(TEXTS)])
        sent += 1
        with tally.lock:
            tally.statuses[status] += 1
            if status == 200:
                tally.admitted_s.append(seconds)
            if status == 503 and retry_after is None:
                tally.without_retry_after += 1
        if status == 503:
            time.sleep(min(float(retry_after or 1), max_wait_s))


def worker_rss_mib(master_pid: int) -> float:
    """The resident memory of the master's children (the workers), in MiB."""
    total = 0
    children = Path(f"/proc/{master_pid}/task/{master_pid}/children").read_text().split()
    for pid in children:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


@dataclass(frozen=True)
class Report:
    clients: int
    seconds: float
    statuses: dict[str, int]
    server_errors_other_than_503: int
    refusals_without_retry_after: int
    admitted_p50_s: float
    admitted_p99_s: float
    admitted_max_s: float
    memory_start_mib: float
    memory_peak_mib: float
    memory_end_mib: float
    recovery_s: float


def run(app: str, env: dict[str, str], *, clients: int, seconds: float, max_wait_s: float,
        log_path: Path | None = None) -> Report:
    with gunicorn_serving(app, env=env, log_path=log_path) as (url, _, process):
        post(url, TEXTS[0])  # warm
        memory = [worker_rss_mib(process.pid)]
        tally = Tally()
        until = time.monotonic() + seconds
        threads = [threading.Thread(target=client, args=(url, until, tally, i, max_wait_s)) for i in range(clients)]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            memory.append(worker_rss_mib(process.pid))
            time.sleep(1)
        ended = time.monotonic()
        while post(url, TEXTS[0], timeout_s=30)[0] != 200:
            if time.monotonic() - ended > RECOVERY_LIMIT_S:
                break
            time.sleep(0.5)
        recovery = time.monotonic() - ended
        memory.append(worker_rss_mib(process.pid))
    admitted = sorted(tally.admitted_s) or [0.0]
    return Report(clients, seconds, {str(k): v for k, v in sorted(tally.statuses.items())},
                  sum(v for k, v in tally.statuses.items() if k >= 500 and k != 503) + tally.statuses[0],
                  tally.without_retry_after, statistics.median(admitted),
                  admitted[min(len(admitted) - 1, int(0.99 * len(admitted)))], admitted[-1], memory[0], max(memory),
                  memory[-1], recovery)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.overload", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app", default="wsgi:app", help="the WSGI app gunicorn serves (default: %(default)s)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="the server's environment")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--max-wait", type=float, default=5, help="longest Retry-After a client honours (s)")
    parser.add_argument("--log", type=Path, help="the server's log")
    parser.add_argument("--output", type=Path, help="JSON of the report")
    args = parser.parse_args(argv)
    env = dict(item.split("=", 1) for item in args.env)
    report = run(args.app, env, clients=args.clients, seconds=args.seconds, max_wait_s=args.max_wait,
                 log_path=args.log)
    for name, value in asdict(report).items():
        print(f"{name:32} {value:.2f}" if isinstance(value, float) else f"{name:32} {value}")
    if args.output:
        args.output.write_text(json.dumps(asdict(report), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
