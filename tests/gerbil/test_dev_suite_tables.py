"""The dev suite's tables printed again from the JSON of its runs."""
from __future__ import annotations

import json
from pathlib import Path

from gerbil.dev_suite_tables import main, report_tables

STORED = Path(__file__).resolve().parents[2] / "results" / "dev-suite"


def test_a_report_prints_its_date_command_and_one_table_per_task(tmp_path: Path, capsys) -> None:
    row = {"dataset": "AIDA-A", "documents": 216, "precision": 85.0, "recall": 84.0, "f1": 84.5, "macro_f1": 80.0,
           "errors": 0, "ms_per_document": 812.4}
    report = {"date": "2026-12-07T20:00:00+00:00", "command": "python -m gerbil.dev_suite --sets AIDA-A",
              "tasks": {"a2kb": {"rows": [row]}, "d2kb": {"rows": [{**row, "f1": 88.2}]}}}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "2026-12-07T20:00:00+00:00: `python -m gerbil.dev_suite --sets AIDA-A`" in out
    assert "AIDA-A | 216 | 85.0 | 84.0 | 84.5 | 80.0 | 0 | 812" in out and "AIDA-A | 216 | 85.0 | 84.0 | 88.2" in out
    assert out.index("A2KB |") < out.index("D2KB |")


def test_every_stored_dev_suite_report_prints() -> None:
    reports = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(STORED.glob("*.json"))]
    suites = [report for report in reports if "tasks" in report]  # the others are recall and span reports
    assert len(suites) > 80
    assert all(report_tables(report).count(" | docs | ") == len(report["tasks"]) for report in suites)
