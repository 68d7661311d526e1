"""Command line: the development suite, AIDA-A plus five out-of-domain sets and the project's own sentences of
today's text, in A2KB and D2KB, in one table.

One configuration for every set: the suite measures, it never picks a setting per dataset. The headline figures
are AIDA-A's InKB micro F1 and the OOD average: the mean InKB micro F1 of ace2004, spotlight, oke2016-train and
microposts2014-train (oke2015-train is the same sentences as oke2016-train in an earlier annotation, so it is
shown but not averaged). todays-text (`gerbil/sets/`) is shown beside them: the out-of-domain sets are text of
2000–2011, and it holds names of today in news, tweets and short sentences.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import logging
import os
import platform
import shlex
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from tqdm import tqdm

from annotator import DEFAULT_MODEL_DIR
from annotator.errors import ConfigError
from annotator.settings import settings_from_variables
from gerbil.client import Annotator, HttpAnnotator, InProcessAnnotator, Task
from gerbil.datasets import load_dataset
from gerbil.experiment import ExperimentResult, run_experiment
from gerbil.run import to_json

logger = logging.getLogger(__name__)

DEFAULT_DATA_DIR = Path("../shared/data")
IN_DOMAIN = "AIDA-A"
# name → path under the data folder, in the table's order.
SETS: dict[str, str] = {
    IN_DOMAIN: "aida/dev.ttl",
    "ace2004": "ood-dev/ace2004.ttl",
    "spotlight": "ood-dev/spotlight.ttl",
    "oke2015-train": "ood-dev/oke2015-train.ttl",
    "oke2016-train": "ood-dev/oke2016-train.ttl",
    "microposts2014-train": "ood-dev/microposts2014-train.ttl",
}
# Sets the project holds itself (its own text), run like the others.
PROJECT_SETS: dict[str, Path] = {"todays-text": Path(__file__).resolve().parent / "sets" / "todays-text.ttl"}
SET_NAMES = (*SETS, *PROJECT_SETS)
OOD_AVERAGED = ("ace2004", "spotlight", "oke2016-train", "microposts2014-train")
OOD_AVERAGE = "OOD average"


@dataclass(frozen=True)
class SetRow:
    """One dataset's headline figures in one task, in percent.

    Attributes:
        dataset: the set's name.
        documents: documents sent.
        precision, recall, f1: InKB micro scores.
        macro_f1: InKB macro F1.
        errors: calls that failed.
        ms_per_document: mean latency.
    """

    dataset: str
    documents: int
    precision: float
    recall: float
    f1: float
    macro_f1: float
    errors: int
    ms_per_document: float

    @classmethod
    def of(cls, result: ExperimentResult) -> SetRow:
        inkb = result.scores["inkb"]
        return cls(result.dataset, result.documents, inkb.micro.precision * 100, inkb.micro.recall * 100,
                   inkb.micro.f1 * 100, inkb.macro.f1 * 100, len(result.errors), result.mean_latency_s * 1000)


def ood_average(rows: Sequence[SetRow]) -> SetRow | None:
    """The mean of the OOD-averaged sets' figures, or None unless all of them were run."""
    chosen = [row for row in rows if row.dataset in OOD_AVERAGED]
    if len(chosen) != len(OOD_AVERAGED):
        return None

    def mean(name: str) -> float:
        return statistics.fmean(getattr(row, name) for row in chosen)

    return SetRow(OOD_AVERAGE, sum(row.documents for row in chosen), mean("precision"), mean("recall"), mean("f1"),
                  mean("macro_f1"), sum(row.errors for row in chosen), mean("ms_per_document"))


def summarize(results: Sequence[ExperimentResult]) -> list[SetRow]:
    """One row per result, then the OOD average when every averaged set is among them."""
    rows = [SetRow.of(result) for result in results]
    average = ood_average(rows)
    return rows if average is None else [*rows, average]


def format_table(task: Task, rows: Sequence[SetRow]) -> str:
    """A task's rows as a Markdown table (InKB micro P/R/F1 and macro F1)."""
    lines = [f"{task.value.upper()} | docs | InKB P | InKB R | InKB F1 | InKB macro F1 | errors | ms/doc",
             "---|---:|---:|---:|---:|---:|---:|---:"]
    for row in rows:
        name = f"**{row.dataset}**" if row.dataset == OOD_AVERAGE else row.dataset
        lines.append(f"{name} | {row.documents} | {row.precision:.1f} | {row.recall:.1f} | {row.f1:.1f} | "
                     f"{row.macro_f1:.1f} | {row.errors} | {row.ms_per_document:.0f}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m gerbil.dev_suite", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--endpoint", help="URL of a NIF web annotator (default: the linker in process)")
    target.add_argument("--in-process", dest="model_dir", type=Path, metavar="MODEL_DIR", default=DEFAULT_MODEL_DIR,
                        help="the model folder linked in process (default: the shipped checkpoint)")
    parser.add_argument("--kb", dest="kb_path", type=Path, default=os.environ.get("ENTQA_KB_PATH") or None,
                        help="KB file for the in-process linker (default: $ENTQA_KB_PATH, else the model's demo KB)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_DIR,
                        help="folder holding aida/dev.ttl and ood-dev/ (default: %(default)s)")
    parser.add_argument("--sets", nargs="+", choices=SET_NAMES, default=list(SET_NAMES), metavar="SET",
                        help=f"the sets to run (default: all of {', '.join(SET_NAMES)})")
    parser.add_argument("--tasks", nargs="+", choices=[t.value for t in Task], default=[t.value for t in Task])
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="NAME=VALUE",
                        help="in process: a linker setting for every set, over the ENTQA_* variables (which it reads "
                             "as the service does), e.g. --set threshold=0.05 (repeatable; annotator.settings)")
    parser.add_argument("--output", type=Path, default=Path("dev-suite.json"), help="JSON results (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        args.settings = settings_from_variables(os.environ, assignments=args.overrides)
    except ConfigError as error:
        parser.error(str(error))
    if args.endpoint and args.overrides:
        parser.error("--set applies to the in-process linker; configure a service through its environment")
    missing = [name for name in args.sets if not set_path(args.data, name).is_file()]
    if missing:
        parser.error(f"not found under {args.data}: " + ", ".join(f"{name} ({SETS[name]})" for name in missing))
    return args


def set_path(data: Path, name: str) -> Path:
    """The file of the set `name`: the project's own, or under the data folder."""
    return PROJECT_SETS[name] if name in PROJECT_SETS else data / SETS[name]


def make_annotator(args: argparse.Namespace) -> tuple[Annotator, dict[str, Any]]:
    """The annotator under test and what identifies it in the JSON."""
    if args.endpoint:
        return HttpAnnotator(args.endpoint), {"endpoint": args.endpoint}
    from annotator.pipeline.linker import Linker  # heavy (torch, faiss): only for in-process runs

    linker = Linker.from_pretrained(args.model_dir, kb_path=args.kb_path, config_overrides=args.settings.model,
                                    runtime=args.settings.runtime)
    return InProcessAnnotator(linker), {"model_dir": str(args.model_dir), "kb": str(linker.kb_path or "embedded"),
                                        "entities": len(linker.index), "config": linker.config.to_dict(),
                                        "runtime": dataclasses.asdict(args.settings.runtime)}


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the suite, prints one table per task and writes the JSON; returns the exit status."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    annotator, system = make_annotator(args)
    datasets = [load_dataset(name, str(set_path(args.data, name))) for name in args.sets]
    report: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": shlex.join(["python", "-m", "gerbil.dev_suite", *(sys.argv[1:] if argv is None else argv)]),
        "machine": f"{platform.machine()}, {platform.processor() or 'unknown CPU'}, {platform.python_version()}",
        "system": system, "ood_averaged": list(OOD_AVERAGED), "tasks": {}}
    for task in map(Task, args.tasks):
        results = [run_experiment(dataset, annotator, task=task,
                                  progress=partial(tqdm, desc=f"{task.value} {dataset.name}", unit="doc"))
                   for dataset in datasets]
        rows = summarize(results)
        print(format_table(task, rows), end="\n\n", flush=True)  # the tables are the command's output
        report["tasks"][task.value] = {"rows": [row.__dict__ for row in rows], "results": [to_json(r) for r in results]}
        args.output.write_text(json.dumps(report, indent=2), encoding="utf-8")  # each task kept as it finishes
    logger.info("results written to %s", args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
