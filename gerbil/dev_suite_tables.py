"""Command line: the dev suite's tables printed again from the JSON of its runs (`results/dev-suite/`), as the
results documents quote them, with the date and the command of each run.

    python -m gerbil.dev_suite_tables results/dev-suite/baseline-2026-11-27.json
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gerbil.client import Task
from gerbil.dev_suite import SetRow, format_table


def report_tables(report: Mapping[str, Any]) -> str:
    """A dev-suite report's tables (one per task it ran), under its date and command."""
    tables = [format_table(Task(task), [SetRow(**row) for row in entry["rows"]])
              for task, entry in report["tasks"].items()]
    return "\n\n".join([f"{report['date']}: `{report['command']}`", *tables])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path, help="JSON files written by python -m gerbil.dev_suite")
    args = parser.parse_args(argv)
    print("\n\n".join(f"{path}\n\n{report_tables(json.loads(path.read_text(encoding='utf-8')))}"
                      for path in args.reports))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
