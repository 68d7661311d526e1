"""gunicorn with the project's gunicorn.conf.py on a free loopback port, started and stopped for benches and tests."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, NamedTuple

REPOSITORY = Path(__file__).resolve().parents[1]
SERVER_LOG_TAIL = 4000  # characters of a failed server's log worth showing


class Server(NamedTuple):
    """A running gunicorn: its base URL, port and master process."""

    url: str
    port: int
    process: subprocess.Popen[bytes]


def free_port() -> int:
    """A loopback port nobody listens on now (the OS picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_health(url: str, process: subprocess.Popen[bytes], deadline_s: float) -> dict[str, Any]:
    """Polls /health until it answers 200; raises when the server exits or the deadline passes.

    /health answers 503 while the model loads, so the first 200 marks the end of the cold start.
    """
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with status {process.returncode} before answering /health")
        try:
            with urllib.request.urlopen(url, timeout=min(5.0, max(0.1, deadline - time.monotonic()))) as response:
                return dict(json.loads(response.read()))
        except (OSError, ValueError):
            time.sleep(0.1)  # not bound yet, or still loading: try again
    raise TimeoutError(f"no /health answer within {deadline_s:.0f} s")


def stop(process: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    """SIGTERM (gunicorn stops its workers gracefully), then SIGKILL after `timeout_s`."""
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def gunicorn_serving(app: str = "wsgi:app", *, env: Mapping[str, str] | None = None, log_path: Path | None = None,
                     startup_timeout_s: float = 300) -> Iterator[Server]:
    """gunicorn serving the WSGI app `app` (module:variable) with `env` added to the environment, once /health
    answers, until the block ends. Its output goes to `log_path` (else nowhere); the log's tail is printed when
    starting or the block fails."""
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}", app]
    with ExitStack() as stack:
        log = stack.enter_context(log_path.open("wb")) if log_path is not None else subprocess.DEVNULL
        process = subprocess.Popen(command, cwd=REPOSITORY, env={**os.environ, **(env or {})}, stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        stack.callback(stop, process)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for_health(f"{url}/health", process, startup_timeout_s)
            yield Server(url, port, process)
        except Exception:
            if log_path is not None:
                print(log_path.read_text(encoding="utf-8", errors="replace")[-SERVER_LOG_TAIL:], file=sys.stderr)
            raise


def read_until_closed(connection: socket.socket) -> bytes:
    """What the server sends on `connection` until it closes it or the connection's timeout passes."""
    answer = b""
    try:
        while chunk := connection.recv(65536):
            answer += chunk
    except TimeoutError:
        pass
    return answer


def raw_exchange(port: int, request: bytes, *, timeout: float = 10) -> bytes:
    """Sends `request` bytes as they are, for requests no HTTP client would send, and returns the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(request)
        return read_until_closed(connection)
