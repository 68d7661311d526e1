"""The command line: datasets in, a paper-style table out, JSON written."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.runtime.settings import RuntimeSettings
from annotator.settings import LinkerSettings
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


def test_the_in_process_linker_takes_the_services_settings_from_the_environment(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ENTQA_KB_PATH", "/data/kb.jsonl")
    monkeypatch.setenv("ENTQA_THRESHOLD", "0.1")
    monkeypatch.setenv("ENTQA_INDEX_TYPE", "hnsw")
    config = parse_args(["--in-process", "--dataset", "a=b.ttl"])
    assert config.kb_path == Path("/data/kb.jsonl")
    assert config.settings == LinkerSettings(model={"threshold": 0.1}, runtime=RuntimeSettings(index_type="hnsw"))
    assert parse_args(["--in-process", "--kb", "other.jsonl", "--dataset", "a=b.ttl"]).kb_path == Path("other.jsonl")
    monkeypatch.setenv("ENTQA_INDEX_TYPE", "ivfpq")
    with pytest.raises(SystemExit):
        parse_args(["--in-process", "--dataset", "a=b.ttl"])
    assert "ENTQA_INDEX_TYPE: Input should be 'flat' or 'hnsw', got 'ivfpq'" in capsys.readouterr().err
