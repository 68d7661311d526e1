"""deploy/nginx.conf in front of a real gunicorn (Debian's nginx, `apt-get install nginx-light`): clients that stall
inside their headers hold nginx connections, not gunicorn's request threads."""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from bench.gunicorn_process import REPOSITORY, free_port, gunicorn_serving, stop
from tests.support.gerbil_requests import HEADERS, gerbil_request

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path(NGINX).is_file(), reason="nginx is not installed (apt-get install nginx-light)")]
THREADS = 2  # gunicorn's request threads: as many stalled clients hold them all


@contextmanager
def nginx_before(upstream_port: int, folder: Path) -> Iterator[int]:
    """nginx with the shipped server configuration, its ports set to a free one and `upstream_port`."""
    port = free_port()
    snippet = (REPOSITORY / "deploy" / "nginx.conf").read_text(encoding="utf-8")
    snippet = snippet.replace("server 127.0.0.1:8080;", f"server 127.0.0.1:{upstream_port};")
    snippet = snippet.replace("listen 8000;", f"listen 127.0.0.1:{port};")
    (folder / "entqa.conf").write_text(snippet, encoding="utf-8")
    temporary = "".join(f"{kind}_temp_path {folder / kind};\n"
                        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    (folder / "nginx.conf").write_text(f"events {{}}\nhttp {{\n{temporary}access_log {folder / 'access.log'};\n"
                                       f"include {folder / 'entqa.conf'};\n}}\n", encoding="utf-8")
    process = subprocess.Popen([NGINX, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g",
                                f"daemon off; pid {folder / 'nginx.pid'}; error_log {folder / 'error.log'};"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, (folder / "error.log").read_text()
                time.sleep(0.05)
        yield port
    finally:
        stop(process)


def stalled_clients(port: int, count: int) -> list[socket.socket]:
    """`count` connections that send half a request's headers and then nothing."""
    clients = []
    for _ in range(count):
        client = socket.create_connection(("127.0.0.1", port), timeout=5)
        client.sendall(b"POST /gerbil HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-turtle\r\n")
        clients.append(client)
    return clients


def answers_within(url: str, seconds: float) -> bool:
    request = urllib.request.Request(url, data=gerbil_request("Paris"), headers=HEADERS, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=seconds) as response:
            return response.status == 200
    except OSError:
        return False


def test_stalled_headers_hold_nginx_not_gunicorn(tmp_path: Path) -> None:
    with ExitStack() as stack:
        url, gunicorn_port, _ = stack.enter_context(gunicorn_serving(
            "tests.support.wsgi_test_app:app", env={"ENTQA_THREADS": str(THREADS)}))
        nginx_port = stack.enter_context(nginx_before(gunicorn_port, tmp_path))
        behind = stalled_clients(nginx_port, 2 * THREADS)
        assert answers_within(f"http://127.0.0.1:{nginx_port}/gerbil", 5)  # through nginx: answered
        for client in behind:
            client.close()
        direct = stalled_clients(gunicorn_port, THREADS)  # without nginx they take every request thread
        assert not answers_within(f"{url}/gerbil", 3)
        for client in direct:
            client.close()
        assert answers_within(f"http://127.0.0.1:{nginx_port}/gerbil", 10)
        log = (tmp_path / "access.log").read_text(encoding="utf-8")
    assert '"POST /gerbil HTTP/1.1" 200' in log
