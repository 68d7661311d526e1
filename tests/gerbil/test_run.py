"""The command line: datasets in, a paper-style table out, JSON written."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gerbil.client import Task
from gerbil.run import main, parse_args
from tests.gerbil.conftest import StubServer


def test_endpoint_run_prints_table_and_writes_json(stub_server: StubServer, resources: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "results.json"
    status = main(["--endpoint", stub_server.url, "--dataset", f"shape={resources / 'gerbil_shape.ttl'}",
                   "--dataset", f"oke={resources / 'synthetic_same_as.ttl'}", "--task", "a2kb", "--output", str(output)])
    assert status == 0
    table = capsys.readouterr().out
    assert "InKB micro F1" in table and "shape" in table and "oke" in table and "Average" in table
    results = json.loads(output.read_text(encoding="utf-8"))
    assert [r["dataset"] for r in results] == ["shape", "oke"]
    shape = results[0]
    assert shape["task"] == "a2kb" and shape["documents"] == 3 and shape["errors"] == {}
    # The stub sends confidences, so GERBIL's best-threshold search applies.
    assert shape["scores"]["inkb"]["micro"]["f1"] == 1.0 and shape["scores"]["inkb"]["threshold"] == 0.9
    assert len(stub_server.requests) == 4


def test_parse_args() -> None:
    config = parse_args(["--in-process", "models/x", "--dataset", "a=b.ttl", "--task", "d2kb", "--header", "K", "V"])
    assert config.task is Task.D2KB and config.endpoint is None and config.model_dir == Path("models/x")
    assert config.datasets == (("a", "b.ttl"),) and config.headers == {"K": "V"}
    with pytest.raises(SystemExit):
        parse_args(["--endpoint", "http://x", "--dataset", "no-equals-sign"])
    with pytest.raises(SystemExit):
        parse_args(["--dataset", "a=b.ttl"])  # neither endpoint nor in-process
