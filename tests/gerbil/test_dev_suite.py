"""The dev-suite command on fixture sets laid out like ../shared/data, against a stub annotator."""
from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest

from gerbil.datasets import load_dataset
from gerbil.dev_suite import OOD_AVERAGE, OOD_AVERAGED, PROJECT_SETS, SET_NAMES, SETS, SetRow, main, ood_average
from tests.gerbil.conftest import StubServer


@pytest.fixture
def data_dir(resources: Path, tmp_path: Path) -> Path:
    """Every suite set present: OKE from the sameAs fixture, the others from the GERBIL-shaped one."""
    root = tmp_path / "data"
    for name, relative in SETS.items():
        source = resources / ("synthetic_same_as.ttl" if name.startswith("oke") else "gerbil_shape.ttl")
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, root / relative)
    return root


def test_suite_runs_every_set_in_both_tasks(stub_server: StubServer, data_dir: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "suite.json"
    assert main(["--endpoint", stub_server.url, "--data", str(data_dir), "--output", str(output)]) == 0
    tables = capsys.readouterr().out
    assert "A2KB |" in tables and "D2KB |" in tables and f"**{OOD_AVERAGE}**" in tables
    report = json.loads(output.read_text(encoding="utf-8"))
    assert report["system"] == {"endpoint": stub_server.url} and report["ood_averaged"] == list(OOD_AVERAGED)
    for task in ("a2kb", "d2kb"):
        rows = {row["dataset"]: row for row in report["tasks"][task]["rows"]}
        assert list(rows) == [*SET_NAMES, OOD_AVERAGE]
        assert rows[OOD_AVERAGE]["f1"] == pytest.approx(statistics.fmean(rows[n]["f1"] for n in OOD_AVERAGED))
        # The row is the GERBIL result's InKB micro F1 in percent, not another computation.
        aida = next(r for r in report["tasks"][task]["results"] if r["dataset"] == "AIDA-A")
        assert rows["AIDA-A"]["f1"] == pytest.approx(aida["scores"]["inkb"]["micro"]["f1"] * 100)


def test_average_needs_every_averaged_set() -> None:
    rows = [SetRow(name, 1, 50.0, 50.0, f1, 40.0, 0, 10.0) for name, f1 in zip(OOD_AVERAGED, (10.0, 20.0, 30.0, 40.0))]
    assert ood_average(rows).f1 == 25.0 and ood_average(rows).documents == 4
    assert ood_average(rows[:3]) is None


def test_refuses_missing_sets_and_bad_overrides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--data", str(tmp_path), "--sets", "spotlight"])
    assert "spotlight (ood-dev/spotlight.ttl)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--data", str(tmp_path), "--set", "no-equals-sign"])
    assert "expected NAME=VALUE, got 'no-equals-sign'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--data", str(tmp_path), "--sets", "AIDA-A", "--set", "merge=paper"])
    assert "unknown setting 'merge'; valid: ['add_topic'," in capsys.readouterr().err


def test_the_projects_own_set_is_gerbil_shaped_dbpedia_gold() -> None:
    dataset = load_dataset("todays-text", str(PROJECT_SETS["todays-text"]))
    golds = [annotation for document in dataset.documents for annotation in document.annotations]
    assert len(dataset.documents) == 78 and len(golds) == 180
    assert all(len(a.uris) == 1 and a.uris[0].startswith("http://dbpedia.org/resource/") for a in golds)
