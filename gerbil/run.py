"""Command line: replay GERBIL A2KB/D2KB experiments on benchmark datasets and print a paper-style table."""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from tqdm import tqdm

from annotator import DEFAULT_MODEL_DIR
from annotator.errors import ConfigError
from annotator.settings import LinkerSettings, settings_from_variables
from gerbil.client import DEFAULT_TIMEOUT_S, Annotator, HttpAnnotator, InProcessAnnotator, Task
from gerbil.datasets import load_dataset, load_redirects
from gerbil.experiment import ExperimentResult, run_experiment

logger = logging.getLogger(__name__)

# (header, class, measure) of the table's score columns, InKB micro F1 first as papers quote it.
_COLUMNS = (("InKB micro F1", "inkb", "micro"), ("InKB macro F1", "inkb", "macro"),
            ("all micro F1", "all", "micro"), ("EE micro F1", "ee", "micro"))


@dataclass(frozen=True)
class RunConfig:
    """What one invocation evaluates.

    Attributes:
        datasets: (name, path spec) pairs, see `gerbil.datasets.load_dataset`.
        task: the experiment type.
        endpoint: the NIF web service URL (None: in-process).
        model_dir: the model folder for in-process runs.
        kb_path: an optional KB file for the in-process linker.
        settings: the in-process linker's (the command line reads them from ENTQA_*, as the service does).
        matching: A2KB span matching, "strong" or "weak".
        redirects: an optional redirects TSV.
        timeout_s: per-request timeout.
        headers: extra HTTP headers.
        with_confidence: in-process: pass scores on as confidences (best-threshold search).
        output: where the JSON results go.
    """

    datasets: tuple[tuple[str, str], ...]
    task: Task
    endpoint: str | None = None
    model_dir: Path | None = None
    kb_path: Path | None = None
    settings: LinkerSettings = field(default_factory=LinkerSettings)
    matching: str = "strong"
    redirects: Path | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    headers: dict[str, str] = field(default_factory=dict)
    with_confidence: bool = False
    output: Path = Path("gerbil-results.json")


def _dataset_spec(value: str) -> tuple[str, str]:
    name, sep, path = value.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH, got {value!r}")
    return name, path


def parse_args(argv: Sequence[str] | None = None, *, prog: str = "python -m gerbil.run") -> RunConfig:
    """Parses the command line into a `RunConfig`; `prog` names the command in help."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--endpoint", help="URL of a NIF web annotator")
    target.add_argument("--in-process", dest="model_dir", type=Path, metavar="MODEL_DIR", nargs="?",
                        const=DEFAULT_MODEL_DIR,
                        help="call the Linker of this model folder directly (default: the shipped checkpoint)")
    parser.add_argument("--kb", dest="kb_path", type=Path, default=os.environ.get("ENTQA_KB_PATH") or None,
                        help="KB file for the in-process linker (default: $ENTQA_KB_PATH, else the model's demo KB); "
                             "its other settings come from ENTQA_* as the service's do")
    parser.add_argument("--dataset", dest="datasets", type=_dataset_spec, action="append", required=True,
                        metavar="NAME=PATH", help="a dataset; repeat for several (AIDA TSV: PATH#first-last)")
    parser.add_argument("--task", choices=[task.value for task in Task], default=Task.A2KB.value)
    parser.add_argument("--matching", choices=("strong", "weak"), default="strong")
    parser.add_argument("--redirects", type=Path, help="TSV of source<TAB>target URIs or titles")
    parser.add_argument("--timeout", dest="timeout_s", type=float, default=DEFAULT_TIMEOUT_S)
    parser.add_argument("--header", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    parser.add_argument("--with-confidence", action="store_true")
    parser.add_argument("--output", type=Path, default=Path("gerbil-results.json"))
    args = parser.parse_args(argv)
    try:
        settings = settings_from_variables(os.environ)
    except ConfigError as error:
        parser.error(str(error))
    return RunConfig(datasets=tuple(args.datasets), task=Task(args.task), endpoint=args.endpoint,
                     model_dir=args.model_dir, kb_path=args.kb_path, settings=settings, matching=args.matching,
                     redirects=args.redirects, timeout_s=args.timeout_s, headers=dict(args.header),
                     with_confidence=args.with_confidence, output=args.output)


def make_annotator(config: RunConfig) -> Annotator:
    """The HTTP annotator, or the in-process one around the real linker (imported only then)."""
    if config.endpoint is not None:
        return HttpAnnotator(config.endpoint, timeout_s=config.timeout_s, headers=config.headers)
    from annotator.pipeline.linker import Linker  # heavy (torch, faiss): only for in-process runs

    linker = Linker.from_pretrained(config.model_dir, kb_path=config.kb_path, config_overrides=config.settings.model,
                                    runtime=config.settings.runtime)
    return InProcessAnnotator(linker, with_confidence=config.with_confidence)


def format_table(results: Sequence[ExperimentResult]) -> str:
    """One row per dataset and their average: F1 scores in percent, failed calls and ms per document."""
    header = ["Dataset", "docs", *(c[0] for c in _COLUMNS), "errors", "ms/doc"]
    f1s = [[getattr(r.scores[cls], measure).f1 * 100 for _, cls, measure in _COLUMNS] for r in results]
    rows = [[r.dataset, str(r.documents), *(f"{v:.1f}" for v in values), str(len(r.errors)),
             f"{r.mean_latency_s * 1000:.0f}"] for r, values in zip(results, f1s)]
    if results:
        rows.append(["Average", "", *(f"{statistics.fmean(column):.1f}" for column in zip(*f1s)), "", ""])
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths)))
             for line in [header, *rows]]
    return "\n".join([lines[0], "-" * len(lines[0]), *lines[1:]])


def to_json(result: ExperimentResult) -> dict[str, Any]:
    """A result as plain JSON-able data, with the derived fields."""
    data = dataclasses.asdict(result)
    data["task"] = result.task.value
    data["gerbil_would_abort"] = result.gerbil_would_abort
    data["mean_latency_s"] = result.mean_latency_s
    return data


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m gerbil.run") -> int:
    """Runs the experiments, prints the table and writes the JSON; returns the exit status (`entqa evaluate` runs
    this, with its own `prog`)."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    config = parse_args(argv, prog=prog)
    redirects = load_redirects(config.redirects) if config.redirects else None
    annotator = make_annotator(config)
    results = []
    for name, spec in config.datasets:
        dataset = load_dataset(name, spec, redirects=redirects)
        results.append(run_experiment(dataset, annotator, task=config.task, matching=config.matching,
                                      progress=partial(tqdm, desc=name, unit="doc")))
    print(format_table(results))  # the table is the command's output
    config.output.write_text(json.dumps([to_json(r) for r in results], indent=2), encoding="utf-8")
    logger.info("results written to %s", config.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
