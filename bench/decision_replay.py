"""Bench: the learned decision against the shipped rules on the same readings, on the dev suite's sets.

Each set is read once per task by the linker's stages up to the decision (retrieval, reading, the second readings
and the first-pass rules; kept in `--readings` between runs), then decided twice: by the shipped rule stages that
follow (`shipped`, what `gerbil.dev_suite` measures for the shipped config), and by the checkpoint's learned
decision followed by the rule stages named in `--keep` (`decision`). Scores are GERBIL's InKB micro F1 (strong
matching), as the dev suite's.

    python -m bench.decision_replay --kb ../shared/data/kb/entities.jsonl.gz --readings /tmp/readings
"""
from __future__ import annotations

import argparse
import copy
import json
import logging
import os
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from annotator import DEFAULT_MODEL_DIR
from annotator.decision.model import Decision, reader_identity
from annotator.decision.stage import LearnedDecision
from annotator.decision.training import read_documents, reading_linker
from annotator.knowledge.loading import load_knowledge
from annotator.pipeline.document import Document
from annotator.pipeline.linker import Linker
from annotator.pipeline.text_view import TextView
from annotator.settings import settings_from_variables
from gerbil.client import Answer, Task
from gerbil.datasets import Dataset, load_dataset
from gerbil.dev_suite import DEFAULT_DATA_DIR, OOD_AVERAGED, SET_NAMES, set_path
from gerbil.experiment import evaluate
from nif import annotations_from_mentions


def read_set(linker: Linker, dataset: Dataset, task: Task, cache: Path | None) -> tuple[list[TextView], list[Document]]:
    """The set's documents read up to the decision (from `cache` when there)."""
    spans = [[(a.start, a.end) for a in d.annotations] if task is Task.D2KB else None for d in dataset.documents]
    return read_documents(linker, [d.text for d in dataset.documents], spans, cache=cache,
                          description=f"{dataset.name} {task.value}")


def answers(linker: Linker, dataset: Dataset, task: Task, views: Sequence[TextView], documents: Sequence[Document],
            stages: Sequence) -> list[Answer]:
    """The answers after `stages` revise a copy of the read documents."""
    documents = copy.deepcopy(list(documents))
    for stage in stages:
        stage.revise(documents, reading=linker.reading, decoding=linker.decoding)
    result = []
    for doc, view, document in zip(dataset.documents, views, documents):
        spans = [(a.start, a.end) for a in doc.annotations] if task is Task.D2KB else None
        result.append(Answer(annotations_from_mentions(linker.mentions(doc.text, view, document), spans=spans), 0.0))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.decision_replay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL_DIR)
    parser.add_argument("--decision", type=Path, help="checkpoint folder whose decision/ is used (default: --model)")
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--sets", nargs="+", choices=SET_NAMES, default=["AIDA-A", *OOD_AVERAGED])
    parser.add_argument("--tasks", nargs="+", choices=[t.value for t in Task], default=[t.value for t in Task])
    parser.add_argument("--keep", nargs="*", action="append",
                        help="rule stages (class names) run after the decision, one variant per --keep "
                             "(default: WebAddresses only)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="NAME=VALUE",
                        help="a linker setting, over the ENTQA_* variables (as gerbil.dev_suite's --set)")
    parser.add_argument("--readings", type=Path, help="folder keeping the read documents between runs (one per "
                                                      "setting: the readings depend on it)")
    parser.add_argument("--output", type=Path, help="JSON of the figures")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = settings_from_variables(os.environ, assignments=args.overrides)
    linker = Linker.from_pretrained(args.model, kb_path=args.kb, config_overrides={**settings.model, "decision": False},
                                    runtime=settings.runtime)
    reader = reading_linker(linker)
    after = list(linker.post_processors[len(reader.post_processors):])
    variants = {"shipped": after}
    decision_dir = args.decision or args.model
    if (decision_dir / "decision").is_dir():  # else the sets are only read and scored as shipped
        knowledge, _ = load_knowledge(args.model, args.kb)
        decision = LearnedDecision(Decision.load(decision_dir, reader_id=reader_identity(args.model)),
                                   linker.index.titles, linker.descriptions.described(), knowledge, linker.config)
        for keep in args.keep or [["WebAddresses"]]:
            variants["+".join(["decision", *keep])] = [decision, *(stage for stage in after
                                                                   if type(stage).__name__ in keep)]
    figures: dict[str, dict[str, dict[str, float]]] = {}
    for task in map(Task, args.tasks):
        for name in args.sets:
            dataset = load_dataset(name, str(set_path(args.data, name)))
            cache = args.readings / f"{name}-{task.value}.pkl" if args.readings else None
            views, documents = read_set(reader, dataset, task, cache)
            for variant, stages in variants.items():
                scores = evaluate(dataset, answers(linker, dataset, task, views, documents, stages), task=task)
                figures.setdefault(f"{task.value} {variant}", {})[name] = 100 * scores["inkb"].micro.f1
    for key, row in figures.items():
        ood = [row[name] for name in OOD_AVERAGED if name in row]
        if len(ood) == len(OOD_AVERAGED):
            row["OOD average"] = statistics.fmean(ood)
        print(f"{key:40} " + "  ".join(f"{name} {value:.2f}" for name, value in row.items()))
    if args.output:
        command = ["python", "-m", "bench.decision_replay", *(sys.argv[1:] if argv is None else argv)]
        args.output.write_text(json.dumps({"command": command,
                                           "figures": figures}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
