"""Benchmark: memory of one serving worker (docs/RESULTS.md "Memory per serving worker").

One gunicorn worker as the README runs it (this checkout's gunicorn.conf.py and wsgi:app, ENTQA_KB_PATH=<kb>), timed
from its start to the first /health 200, then one A2KB request (/api/link, no spans); then the worker's `VmHWM`
(peak) and `VmRSS` (now), with RSS's anonymous and file-backed parts, from /proc/<worker>/status.

Run from the repository root:

    python -m bench.worker_memory --kb ../shared/data/kb/entities.jsonl.gz [--search cpu] [--precision int8]

`--search cpu` makes the worker search as a CPU without bf16 products does (faiss's flat index over float32
vectors): the worker serves an app factory, written to a temporary folder, that patches `search_hardware` before
wsgi:app loads (a bench-only switch, so that both exact-search paths are measured on one machine). `--checkout DIR`
serves another checkout (e.g. the baseline's worktree) with the same measurement.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.gunicorn_process import SERVER_LOG_TAIL, free_port, stop, wait_for_health

REPOSITORY = Path(__file__).resolve().parents[1]
SHARED_KB = REPOSITORY.parent / "shared" / "data" / "kb" / "entities.jsonl.gz"
# A news text of AIDA's kind (1,100 characters), linked A2KB (the linker finds the mentions).
TEXT = ("SOCCER - JAPAN GET LUCKY WIN, CHINA IN SURPRISE DEFEAT. Nadim Ladki AL-AIN, United Arab Emirates "
        "1996-12-06 Japan began the defence of their Asian Cup title with a lucky 2-1 win against Syria in a "
        "Group C championship match on Friday. But China saw their luck desert them in the second match of the "
        "group, crashing to a surprise 2-0 defeat to newcomers Uzbekistan. China controlled most of the match "
        "and saw several chances missed until the 78th minute when Uzbek striker Igor Shkvyrin took advantage "
        "of a misdirected defensive header to lob the ball over the advancing Chinese keeper and into an empty "
        "net. Oleg Shatskiku made sure of the win in injury time, hitting an unstoppable left foot shot from "
        "just outside the area. The former Soviet republic was playing in an Asian Cup finals tie for the "
        "first time. Despite winning the Asian Games title two years ago, Uzbekistan are in the finals as "
        "outsiders. Ajax Amsterdam signed a striker from Brazil, and Angela Merkel met Jacques Chirac in "
        "Paris before flying to Washington.")


# wsgi:app on a worker whose exact search takes the "cpu" path (faiss's flat index), whatever the CPU.
CPU_SEARCH_APP = '''
def app():
    from annotator.entity_index import entity_index
    entity_index.search_hardware = lambda use_gpu: "cpu"
    from wsgi import app
    return app
'''


def worker_pid(master: int) -> int:
    """The one worker of a gunicorn master (its only child)."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    if len(children) != 1:
        raise RuntimeError(f"gunicorn master {master} has {len(children)} workers, not one")
    return int(children[0])


def memory_status(pid: int) -> dict[str, float]:
    """VmHWM, VmRSS, RssAnon and RssFile of a process, GiB."""
    figures = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
            figures[key] = int(value.split()[0]) / 2**20  # kB
    return figures


def measure(kb: str, *, search: str, precision: str | None, checkout: Path = REPOSITORY) -> dict[str, Any]:
    env = {**os.environ, "ENTQA_KB_PATH": str(Path(kb).resolve())}
    if precision:
        env["ENTQA_CPU_PRECISION"] = precision
    with tempfile.TemporaryDirectory() as folder, (Path(folder) / "log").open("wb") as log:
        command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{free_port()}"]
        if search == "cpu":
            (Path(folder) / "entqa_cpu_search.py").write_text(CPU_SEARCH_APP)
            command += ["--pythonpath", folder, "entqa_cpu_search:app()"]
        else:
            command.append("wsgi:app")
        started = time.monotonic()
        process = subprocess.Popen(command, cwd=checkout, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
        try:
            return _measured(process, started, kb=kb, search=search, precision=precision)
        except Exception:
            print((Path(folder) / "log").read_text(errors="replace")[-SERVER_LOG_TAIL:], file=sys.stderr)
            raise
        finally:
            stop(process)


def _measured(process: subprocess.Popen[bytes], started: float, **settings: Any) -> dict[str, Any]:
    port = int(process.args[process.args.index("--bind") + 1].rpartition(":")[2])
    url = f"http://127.0.0.1:{port}"
    wait_for_health(f"{url}/health", process, 1800)
    healthy_s = time.monotonic() - started
    pid = worker_pid(process.pid)
    after_start = memory_status(pid)
    request = urllib.request.Request(f"{url}/api/link", data=json.dumps({"text": TEXT}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        answer = json.loads(response.read())
    after_request = memory_status(pid)
    mentions = answer.get("mentions", answer) if isinstance(answer, dict) else answer
    return {**settings, "precision": settings["precision"] or "auto", "healthy_s": round(healthy_s, 1),
            "mentions": len(mentions), "after_start_gib": {k: round(v, 3) for k, v in after_start.items()},
            "after_request_gib": {k: round(v, 3) for k, v in after_request.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", default=str(SHARED_KB), help="the KB file the worker serves (ENTQA_KB_PATH)")
    parser.add_argument("--search", choices=("auto", "cpu"), default="auto",
                        help="exact search as this CPU does it (auto) or as a CPU without bf16 does (cpu)")
    parser.add_argument("--precision", help="ENTQA_CPU_PRECISION for the worker (default: auto)")
    parser.add_argument("--checkout", type=Path, default=REPOSITORY,
                        help="the checkout whose gunicorn.conf.py and wsgi:app serve (default: this one)")
    args = parser.parse_args()
    figures = measure(args.kb, search=args.search, precision=args.precision, checkout=args.checkout.resolve())
    figures["checkout"] = str(args.checkout)
    print(json.dumps(figures))
    request = figures["after_request_gib"]
    print(f"healthy in {figures['healthy_s']} s; worker peak (VmHWM) {request['VmHWM']:.2f} GiB, after the request "
          f"(VmRSS) {request['VmRSS']:.2f} GiB (anonymous {request['RssAnon']:.2f}, file {request['RssFile']:.2f})")


if __name__ == "__main__":
    main()
