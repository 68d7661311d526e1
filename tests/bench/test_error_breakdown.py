"""The error breakdown gives each gold mention and prediction the outcome its definition says."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from annotator.pipeline.linker import Linker
from annotator.training.data import CorpusDocument, GoldLink, TitleLookup, build_documents, load_kb
from annotator.uris import dbpedia_uri
from bench.error_breakdown import CandidateRecording, classify_document, reachability
from gerbil.matching import Marking
from tests.conftest import TINY_RUNTIME

TEXT = "Lyon beat Paris Saint-Germain in France while Paris Hilton watched from Berlin ."


def _in_kb(start: int, end: int, title: str) -> Marking:
    return Marking(start, end, frozenset({dbpedia_uri(title)}), in_kb=True)


def test_every_gold_and_prediction_outcome() -> None:
    golds = [_in_kb(0, 4, "Lyon"),  # linked correctly
             _in_kb(10, 29, "Paris Saint-Germain"),  # right span, wrong entity
             _in_kb(33, 39, "France"),  # boundary differs
             _in_kb(46, 58, "Paris Hilton"),  # span not found
             _in_kb(72, 78, "Berlin"),  # not among the candidates, though predicted right
             _in_kb(5, 9, "Nowhere")]  # not in the KB
    reachable = [True, True, True, True, False, None]
    predictions = [_in_kb(0, 4, "Lyon"), _in_kb(10, 29, "Paris"), _in_kb(33, 36, "France"),
                   _in_kb(72, 78, "Berlin"), _in_kb(40, 45, "While")]
    emerging = [Marking(40, 45, frozenset({"http://aksw.org/notInWiki/While"}))]
    gold_outcomes, prediction_outcomes = classify_document(golds, reachable, emerging, predictions)
    assert gold_outcomes == ["linked correctly", "right span, wrong entity", "span boundary differs",
                             "span not found", "linked correctly", "gold entity not in the KB"]
    assert prediction_outcomes == ["correct", "gold span, wrong entity", "overlaps a gold mention, other offsets",
                                   "correct", "span of a NIL gold mention"]
    alone = classify_document([], [], [], [_in_kb(0, 4, "Lyon")])
    assert alone == ([], ["no gold mention there"])


def test_each_gold_prediction_consumed_once() -> None:
    golds = [_in_kb(0, 4, "Lyon")] * 2
    outcomes, predicted = classify_document(golds, [True, True], [], [_in_kb(0, 4, "Lyon")])
    assert outcomes == ["linked correctly", "right span, wrong entity"]
    assert predicted == ["correct"]


def test_reachability_follows_the_recorded_candidates(tiny_checkpoint: Path, tiny_kb: Path,
                                                      entqa_cache: Path) -> None:
    kb = load_kb(tiny_kb)
    linker = Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu",
                                    config_overrides={"top_k": len(kb)}, runtime=TINY_RUNTIME)
    titles = ["France", "Paris Hilton", "Berlin", "Paris Saint-Germain"]  # the last is not in the tiny KB
    corpus = CorpusDocument("http://example.org/doc", TEXT,
                            tuple(GoldLink(TEXT.index(t), TEXT.index(t) + len(t), t) for t in titles))
    [document] = build_documents([corpus], linker.builder, TitleLookup(kb))
    offsets = linker.builder.tokenize_document(TEXT).offsets
    recording = CandidateRecording(linker.reading)
    dataclasses.replace(linker, reading=recording).link(TEXT)
    assert len(recording.candidates) == len(document.passages) >= 2
    # K = the whole KB: every gold the KB holds is among the candidates of the passages holding it.
    assert reachability(document, offsets, recording.candidates) == [True, True, True, None]
    nothing = [np.empty(0, dtype=np.int64)] * len(document.passages)
    assert reachability(document, offsets, nothing) == [False, False, False, None]
