"""Experiments end to end: per-class scores, D2KB leftovers ignored, weak matching, failures counted."""
from __future__ import annotations

from pathlib import Path

import pytest

from gerbil.client import Answer, InProcessAnnotator, Task
from gerbil.datasets import Dataset, load_nif
from gerbil.experiment import evaluate, run_experiment
from gerbil.scores import Counts
from nif.data_types import NifAnnotation, NifDocument
from tests.support.dictionary_linker import DictionaryLinker

DBR = "http://dbpedia.org/resource/"
DOC = NifDocument("http://x/1#char=0,43", "Ada Lovelace worked with Babbage in London.", (
    NifAnnotation(0, 12, (DBR + "Ada_Lovelace",)), NifAnnotation(36, 42, (DBR + "London",))))
DATASET = Dataset("tiny", (DOC,))


def answer(*annotations: NifAnnotation) -> list[Answer]:
    return [Answer(annotations, 0.0)]


def test_in_process_run_scores_per_class(resources: Path) -> None:
    dataset = load_nif(resources / "gerbil_shape.ttl", name="shape")
    result = run_experiment(dataset, InProcessAnnotator(DictionaryLinker()), task=Task.A2KB)
    # The linker finds the four KB entities and misses the emerging "Grimble Fotherby".
    assert result.scores["all"].counts == Counts(4, 0, 1)
    assert result.scores["inkb"].counts == Counts(4, 0, 0)
    assert result.scores["ee"].counts == Counts(0, 0, 1)
    # EE macro: doc 1 and the empty doc 3 have no EE at all (1 each), doc 2 misses its one (0).
    assert result.scores["ee"].macro.f1 == pytest.approx(2 / 3)
    assert result.documents == 3 and len(result.latencies_s) == 3 and not result.errors


def test_d2kb_leftovers_are_ignored_but_a2kb_counts_them() -> None:
    answers = answer(NifAnnotation(0, 12, (DBR + "Ada_Lovelace",)), NifAnnotation(25, 32, (DBR + "Charles_Babbage",)),
                     NifAnnotation(36, 42, (DBR + "London",)))
    assert evaluate(DATASET, answers, task=Task.D2KB)["all"].counts == Counts(2, 0, 0)
    assert evaluate(DATASET, answers, task=Task.A2KB)["all"].counts == Counts(2, 1, 0)


def test_d2kb_duplicates_on_a_gold_span_still_cost_precision() -> None:
    answers = answer(NifAnnotation(0, 12, (DBR + "Ada_Lovelace",)), NifAnnotation(0, 12, (DBR + "Ada",)),
                     NifAnnotation(36, 42, (DBR + "London",)))
    assert evaluate(DATASET, answers, task=Task.D2KB)["all"].counts == Counts(2, 1, 0)


def test_weak_matching_accepts_overlap_and_d2kb_stays_strong() -> None:
    answers = answer(NifAnnotation(4, 12, (DBR + "Ada_Lovelace",)), NifAnnotation(36, 42, (DBR + "London",)))
    assert evaluate(DATASET, answers, task=Task.A2KB, matching="weak")["all"].counts == Counts(2, 0, 0)
    assert evaluate(DATASET, answers, task=Task.A2KB)["all"].counts == Counts(1, 1, 1)
    assert evaluate(DATASET, answers, task=Task.D2KB, matching="weak")["all"].counts == Counts(1, 0, 1)


def test_inkb_gold_missed_by_an_unresolvable_prediction_is_a_false_negative() -> None:
    answers = answer(NifAnnotation(0, 12, ("http://example.org/Ada",)), NifAnnotation(36, 42, (DBR + "London",)))
    scores = evaluate(DATASET, answers, task=Task.A2KB)
    assert scores["inkb"].counts == Counts(1, 0, 1)  # the EE-looking prediction leaves the InKB scores
    assert scores["ee"].counts == Counts(0, 1, 0)
    assert scores["all"].counts == Counts(1, 1, 1)


def test_bare_spans_in_an_answer_take_no_part() -> None:
    answers = answer(NifAnnotation(0, 12), NifAnnotation(36, 42, (DBR + "London",)))
    assert evaluate(DATASET, answers, task=Task.A2KB)["all"].counts == Counts(1, 0, 1)


def test_confidences_trigger_the_best_threshold() -> None:
    answers = answer(NifAnnotation(0, 12, (DBR + "Ada_Lovelace",), 0.8), NifAnnotation(25, 32, (DBR + "X",), 0.1),
                     NifAnnotation(36, 42, (DBR + "London",), 0.5))
    scores = evaluate(DATASET, answers, task=Task.A2KB)["all"]
    assert scores.threshold == 0.5 and scores.micro.f1 == 1.0


def test_empty_document_and_empty_answer_scores_one_macro() -> None:
    dataset = Dataset("empty", (NifDocument("http://x/e#char=0,5", "Hello"), DOC))
    answers = [Answer((), 0.0), Answer(DOC.annotations, 0.0)]
    assert evaluate(dataset, answers, task=Task.A2KB)["all"].macro.f1 == 1.0


def test_failures_count_as_empty_answers_and_gerbil_would_abort() -> None:
    class Broken(DictionaryLinker):
        def link(self, text: str, spans: object = None) -> list:  # type: ignore[override]
            raise RuntimeError("down")

    result = run_experiment(DATASET, InProcessAnnotator(Broken()), task=Task.A2KB)
    assert result.errors == {DOC.uri: "RuntimeError: down"}
    assert result.scores["all"].counts == Counts(0, 0, 2)
    assert result.gerbil_would_abort


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="expected 1 answers"):
        evaluate(DATASET, [], task=Task.A2KB)
    with pytest.raises(ValueError, match="strong"):
        evaluate(DATASET, answer(), task=Task.A2KB, matching="fuzzy")
