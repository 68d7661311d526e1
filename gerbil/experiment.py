"""One GERBIL experiment: every document sent to an annotator, answers matched to gold and scored per class."""
from __future__ import annotations

import logging
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from annotator.linking import EntityLinker
from gerbil.client import Annotator, Answer, InProcessAnnotator, Task
from gerbil.datasets import Dataset
from gerbil.matching import SPAN_MATCHES, Marking, count_matches, drop_unmatched_spans, strong_span_match
from gerbil.scores import Scores, score_documents
from gerbil.uris import KB_PREFIXES, UriExpander, is_in_kb
from nif.data_types import NifAnnotation

logger = logging.getLogger(__name__)

# ErrorCountingAnnotatorDecorator.AMOUNT_OF_TOLERATED_ERRORS: above this share GERBIL aborts the experiment.
TOLERATED_ERROR_SHARE = 0.25

CLASSES: dict[str, Callable[[Marking], bool]] = {
    "all": lambda marking: True,
    "inkb": lambda marking: marking.in_kb,
    "ee": lambda marking: not marking.in_kb,
}


@dataclass(frozen=True)
class ExperimentResult:
    """The outcome of one experiment on one dataset.

    Attributes:
        dataset: the dataset's name.
        task: the experiment type.
        matching: the span matching used ("strong" or "weak"; D2KB is always strong).
        scores: per class ("all", "inkb", "ee"), micro and macro P/R/F1.
        documents: how many documents were sent.
        errors: the documents whose call failed (URI → reason); they were scored as empty answers.
        latencies_s: per-document wall-clock latency, in dataset order.
    """

    dataset: str
    task: Task
    matching: str
    scores: dict[str, Scores]
    documents: int
    errors: dict[str, str]
    latencies_s: tuple[float, ...]

    @property
    def gerbil_would_abort(self) -> bool:
        """Whether GERBIL would have stopped with "The annotator caused too many single errors"."""
        return len(self.errors) > TOLERATED_ERROR_SHARE * self.documents

    @property
    def mean_latency_s(self) -> float:
        """Mean seconds per document (0 without documents)."""
        return statistics.fmean(self.latencies_s) if self.latencies_s else 0.0


def to_markings(annotations: Iterable[NifAnnotation], *, expander: UriExpander,
                kb_prefixes: Sequence[str] = KB_PREFIXES) -> list[Marking]:
    """Expands and classifies annotations (the gold side and the annotator side alike).

    Args:
        annotations: NIF annotations.
        expander: the dataset's URI expander.
        kb_prefixes: the KB namespace whitelist.

    Returns:
        One marking per annotation that has a meaning, in order.
    """
    markings = []
    for annotation in annotations:
        if not annotation.uris:
            continue  # a bare span is no NamedEntity for GERBIL: it takes no part in linking scores
        uris = expander.expand(annotation.uris)
        markings.append(Marking(annotation.start, annotation.end, uris,
                                is_in_kb(uris, kb_prefixes=kb_prefixes), annotation.confidence))
    return markings


def document_markings(dataset: Dataset, answers: Sequence[Answer], *, task: Task,
                      kb_prefixes: Sequence[str] = KB_PREFIXES) -> list[tuple[list[Marking], list[Marking]]]:
    """Per document, the gold and predicted markings as GERBIL matches them (expanded and classified).

    D2KB first drops the predictions on no gold span.

    Args:
        dataset: the gold dataset.
        answers: one answer per document, in the dataset's order.
        task: the experiment type.
        kb_prefixes: the KB namespace whitelist.

    Returns:
        (gold, predicted) per document.
    """
    if len(answers) != len(dataset.documents):
        raise ValueError(f"expected {len(dataset.documents)} answers, got {len(answers)}")
    expander = dataset.expander()
    pairs = []
    for document, answer in zip(dataset.documents, answers):
        gold = to_markings(document.annotations, expander=expander, kb_prefixes=kb_prefixes)
        predicted = to_markings(answer.annotations, expander=expander, kb_prefixes=kb_prefixes)
        if task is Task.D2KB:
            predicted = drop_unmatched_spans(gold, predicted)
        pairs.append((gold, predicted))
    return pairs


def evaluate(dataset: Dataset, answers: Sequence[Answer], *, task: Task, matching: str = "strong",
             kb_prefixes: Sequence[str] = KB_PREFIXES) -> dict[str, Scores]:
    """Scores the answers to a dataset's documents, per class.

    D2KB uses the strong entity match (after `document_markings` has dropped the predictions on no gold span);
    A2KB uses the chosen span matching plus meaning matching. Per class, gold and predictions are both filtered to
    that class before matching (GERBIL `MarkingClassBasedMarkingFilter`).

    Args:
        dataset: the gold dataset.
        answers: one answer per document, in the dataset's order.
        task: the experiment type.
        matching: "strong" or "weak" (A2KB only).
        kb_prefixes: the KB namespace whitelist.

    Returns:
        Class name → scores.
    """
    if matching not in SPAN_MATCHES:
        raise ValueError(f"unknown matching {matching!r}; expected one of {sorted(SPAN_MATCHES)}")
    span_match = strong_span_match if task is Task.D2KB else SPAN_MATCHES[matching]
    pairs = document_markings(dataset, answers, task=task, kb_prefixes=kb_prefixes)
    count = partial(count_matches, span_match=span_match)
    return {
        name: score_documents([([g for g in gold if keep(g)], [p for p in predicted if keep(p)])
                               for gold, predicted in pairs], count)
        for name, keep in CLASSES.items()
    }


def run_experiment(dataset: Dataset, annotator: Annotator, *, task: Task, matching: str = "strong",
                   kb_prefixes: Sequence[str] = KB_PREFIXES,
                   progress: Callable[[Iterable[int]], Iterable[int]] = iter) -> ExperimentResult:
    """Sends every document to the annotator, one at a time and in order, then scores the answers.

    Args:
        dataset: the gold dataset.
        annotator: the annotator under test.
        task: the experiment type.
        matching: "strong" or "weak" (A2KB only).
        kb_prefixes: the KB namespace whitelist.
        progress: wraps the document loop (e.g. `tqdm`).

    Returns:
        The scores, failures and latencies.
    """
    answers = [annotator.annotate(dataset.documents[i], task=task)
               for i in progress(range(len(dataset.documents)))]
    errors = {doc.uri: answer.error for doc, answer in zip(dataset.documents, answers) if answer.error}
    if errors:
        logger.warning("%s: %d of %d calls failed and count as empty answers", dataset.name, len(errors),
                       len(answers))
    return ExperimentResult(
        dataset=dataset.name, task=task, matching="strong" if task is Task.D2KB else matching,
        scores=evaluate(dataset, answers, task=task, matching=matching, kb_prefixes=kb_prefixes),
        documents=len(answers), errors=errors, latencies_s=tuple(a.latency_s for a in answers))


def linker_scores(dataset: Dataset, linker: EntityLinker) -> dict[str, float]:
    """A linker's A2KB InKB scores on a dataset in percent, as `python -m gerbil.run --in-process` scores them.

    Returns:
        {"precision", "recall", "f1"} (micro) and "macro_f1".
    """
    inkb = run_experiment(dataset, InProcessAnnotator(linker), task=Task.A2KB).scores["inkb"]
    return {"precision": 100 * inkb.micro.precision, "recall": 100 * inkb.micro.recall, "f1": 100 * inkb.micro.f1,
            "macro_f1": 100 * inkb.macro.f1}
