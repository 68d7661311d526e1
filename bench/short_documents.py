"""Bench: the linker on short documents, a NIF corpus's documents cut into their sentences.

Most of GERBIL's other benchmarks are single sentences or tweets (KORE50, N3-RSS-500, OKE, Derczynski), shorter
than one passage window, while every AIDA document is longer: neither training nor the AIDA-A figures ever
meet a document shorter than a window. This cuts each document at its sentence ends (white space after `.`,
`!` or `?`, never inside a gold mention) into documents of their own, keeps the gold mentions each holds (offsets
moved), and scores the linker on them as GERBIL would (A2KB or D2KB, strong match, InKB): over all of them, and
over those shorter than one window (fewer wordpieces than `passage_len` - 2).

    python -m bench.short_documents --kb ../shared/data/kb/entities.jsonl.gz --dataset ../shared/data/aida/dev.ttl
"""
from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

from tqdm.auto import tqdm

from annotator.pipeline.linker import Linker
from gerbil.client import Answer, InProcessAnnotator, Task
from gerbil.datasets import Dataset, load_nif
from gerbil.experiment import evaluate
from nif.data_types import NifDocument

REPOSITORY = Path(__file__).resolve().parents[1]
_SENTENCE_END = re.compile(r"[.!?]\s+")


def sentence_documents(document: NifDocument) -> list[NifDocument]:
    """The document cut after every sentence end that lies outside its gold mentions, one document per piece.

    A piece keeps the annotations inside it, shifted to its own offsets; pieces of white space only are left out.
    """
    cuts = [m.end() for m in _SENTENCE_END.finditer(document.text)
            if not any(a.start < m.end() and m.start() < a.end for a in document.annotations)]
    base = document.uri.split("#")[0]
    pieces = []
    for begin, end in zip([0, *cuts], [*cuts, len(document.text)]):
        text = document.text[begin:end].rstrip()
        if not text:
            continue
        annotations = tuple(dataclasses.replace(a, start=a.start - begin, end=a.end - begin)
                            for a in document.annotations if begin <= a.start and a.end <= begin + len(text))
        pieces.append(NifDocument(f"{base}/sentence-{len(pieces)}#char=0,{len(text)}", text, annotations))
    return pieces


def _scores(dataset: Dataset, documents: list[NifDocument], answers: list[Answer], task: Task) -> str:
    inkb = evaluate(dataclasses.replace(dataset, documents=tuple(documents)), answers, task=task)["inkb"]
    golds = inkb.counts.tp + inkb.counts.fn
    return (f"{len(documents):>10}{golds:>8}{100 * inkb.micro.precision:>8.1f}{100 * inkb.micro.recall:>8.1f}"
            f"{100 * inkb.micro.f1:>8.1f}{100 * inkb.macro.f1:>10.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPOSITORY / "models" / "entqa-minilm"), help="checkpoint folder")
    parser.add_argument("--kb", help="KB file (default: the checkpoint's demo KB)")
    parser.add_argument("--dataset", required=True, type=Path, help="NIF corpus with gold annotations")
    parser.add_argument("--docs", type=int, help="cut only the first N documents")
    parser.add_argument("--task", choices=[task.value for task in Task], default=Task.A2KB.value)
    args = parser.parse_args()
    task = Task(args.task)

    linker = Linker.from_pretrained(args.model, kb_path=args.kb)
    dataset = load_nif(args.dataset, name=args.dataset.stem)
    documents = [piece for document in dataset.documents[: args.docs] for piece in sentence_documents(document)]
    annotator = InProcessAnnotator(linker)
    answers = [annotator.annotate(document, task=task) for document in tqdm(documents, desc="linking", unit="doc")]
    window = linker.config.passage_len - 2
    short = [i for i, d in enumerate(documents) if len(linker.builder.tokenize_document(d.text).ids) < window]

    print(f"{dataset.name} cut into sentences, {task.value.upper()}, K={linker.config.top_k}, "
          f"γ={linker.config.threshold:g}, {linker.describe()['device']}")
    print(f"{'documents':<30}{'count':>10}{'golds':>8}{'P':>8}{'R':>8}{'F1':>8}{'macro F1':>10}")
    print(f"{'all sentences':<30}{_scores(dataset, documents, answers, task)}")
    print(f"{f'shorter than {window} wordpieces':<30}"
          f"{_scores(dataset, [documents[i] for i in short], [answers[i] for i in short], task)}")


if __name__ == "__main__":
    main()
