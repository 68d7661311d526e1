"""`entqa link --ray --address` on a multi-node Ray cluster: two nodes of one CPU each, started here with `ray start`
as on two machines (a head and a node joining it, each with its own raylet, object store and folder), so that each of
the two actors runs on a node of its own. The command runs unchanged against it and links as `entqa link` in process.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from annotator.cli import command as cli
from tests.cli.test_distributed import BATCH, DEMO_KB, DOCUMENTS, links, part_rows

pytestmark = pytest.mark.slow
pytest.importorskip("ray", reason='Ray is not installed: pip install -e ".[ray]" to run the --ray tests')
psutil = pytest.importorskip("psutil")  # installed with ray

RAY_CLI = Path(sys.executable).with_name("ray")
# The ports each node would take by default and the two nodes on one machine must not share.
NODE_PORTS = ("--node-manager-port", "--object-manager-port", "--metrics-export-port", "--runtime-env-agent-port",
              "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port")
# The cluster's processes and the driver agree on no token authentication: nothing outside this machine reaches it.
CLUSTER_ENV = {**os.environ, "RAY_AUTH_MODE": "disabled"}
START_TIMEOUT_S = 120


@dataclass(frozen=True)
class LocalCluster:
    address: str  # the head's, as `--address` takes it
    node_dirs: tuple[Path, ...]  # each node's --temp-dir, head first


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """A head of one CPU and a second node of one CPU joining it, stopped (their processes only) at the end."""
    if not RAY_CLI.exists():
        pytest.skip(f"`ray start` is not available ({RAY_CLI} is missing): pip install -e \".[ray]\"")
    # Short: Ray's socket paths under the temp dir must fit in a Unix socket name.
    root = Path(tempfile.mkdtemp(prefix="entqa-ray-"))
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, root, ignore_errors=True)
        stack.callback(_stop_processes_under, root)
        head_port, *ports = _free_ports(1 + 2 * len(NODE_PORTS))
        address = f"127.0.0.1:{head_port}"
        nodes = (root / "head", root / "node")
        _start_node(stack, nodes[0], ["--head", "--port", str(head_port), "--include-dashboard", "false"],
                    ports[:len(NODE_PORTS)])
        _start_node(stack, nodes[1], ["--address", address], ports[len(NODE_PORTS):])
        _wait_for_nodes(address, 2)
        yield LocalCluster(address, nodes)


def _free_ports(count: int) -> list[int]:
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:  # all held open at once: no port given twice
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


def _start_node(stack: ExitStack, temp_dir: Path, role: list[str], ports: list[int]) -> None:
    """Starts `ray start --block` for one node and waits until its runtime is up; the node stops with the stack."""
    temp_dir.mkdir()
    log = temp_dir / "ray-start.log"
    options = [value for option, port in zip(NODE_PORTS, ports) for value in (option, str(port))]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(RAY_CLI), "start", "--block", *role, "--num-cpus", "1", "--node-ip-address", "127.0.0.1",
             "--temp-dir", str(temp_dir), "--object-store-memory", str(200 * 2**20), "--disable-usage-stats",
             *options], stdout=out, stderr=subprocess.STDOUT, env=CLUSTER_ENV)
    stack.callback(_stop, process)
    deadline = time.monotonic() + START_TIMEOUT_S
    while "Ray runtime started." not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"ray start {' '.join(role)} did not start a node:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.5)


def _wait_for_nodes(address: str, count: int) -> None:
    probe = (f"import ray, time; ray.init(address={address!r}, log_to_driver=False)\n"
             f"deadline = time.monotonic() + {START_TIMEOUT_S}\n"
             f"while sum(node['Alive'] for node in ray.nodes()) < {count} and time.monotonic() < deadline:\n"
             "    time.sleep(0.5)\n"
             "print(sum(node['Alive'] for node in ray.nodes()))\n")
    answer = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=CLUSTER_ENV,
                            timeout=2 * START_TIMEOUT_S)
    assert answer.stdout.strip() == str(count), f"the cluster did not reach {count} nodes:\n{answer.stderr[-3000:]}"


def _stop(process: subprocess.Popen[bytes]) -> None:
    # `ray start --block` stops its node's processes when terminated.
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _stop_processes_under(root: Path) -> None:
    """Kills whatever the nodes left running: only processes naming this cluster's folder (never `ray stop`, which
    would stop every Ray of the machine)."""
    for process in psutil.process_iter(["cmdline"]):
        if str(root) in " ".join(process.info["cmdline"] or []):
            try:
                process.kill()
            except psutil.Error:
                pass


def test_entqa_link_ray_on_a_two_node_cluster_links_as_in_process(cluster: LocalCluster, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(document) + "\n" for document in DOCUMENTS), encoding="utf-8")
    assert cli.main(["link", "--format", "jsonl", "--batch-size", BATCH, "--kb", str(DEMO_KB), str(corpus)]) == 0
    in_process = {record["id"]: links(record["mentions"])
                  for record in map(json.loads, capsys.readouterr().out.splitlines())}

    output = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "annotator.cli", "link", "--ray", "--address", cluster.address,
                          "--actors", "2", "--batch-size", BATCH, "--kb", str(DEMO_KB), str(corpus),
                          "--output", str(output)], capture_output=True, text=True, env=CLUSTER_ENV, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "linked 12 of 12 documents" in run.stderr
    rows = part_rows(output)
    assert sorted(row["id"] for row in rows) == sorted(document["id"] for document in DOCUMENTS)  # each once
    assert {row["id"]: links(row["mentions"]) for row in rows} == in_process
    # One CPU per node and per actor: the two actors ran one on each node, each logging in its node's folder.
    for node in cluster.node_dirs:
        assert any(line.startswith(":actor_name:") and "LinkerActor" in line
                   for log in node.glob("session_*/logs/worker-*") for line in log.read_text(errors="replace")
                   .splitlines()), f"no linker actor ran on the {node.name} node"
