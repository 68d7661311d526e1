"""The error breakdown gives each gold mention and prediction the outcome its definition says."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from annotator.data_types import Mention
from annotator.pipeline.linker import Linker
from annotator.training.data import GoldSpan, TitleLookup, build_documents, load_kb
from annotator.uris import dbpedia_uri
from bench.error_breakdown import CandidateRecording, classify_document, reachability
from nif.data_types import NifAnnotation, NifDocument

TEXT = "Lyon beat Paris Saint-Germain in France while Paris Hilton watched from Berlin ."


def _mention(start: int, end: int, title: str) -> Mention:
    return Mention(start, end, TEXT[start:end], title, dbpedia_uri(title), 0.5)


def test_every_gold_and_prediction_outcome() -> None:
    golds = [GoldSpan(0, 4, frozenset({"Lyon"})),  # linked correctly
             GoldSpan(10, 29, frozenset({"Paris Saint-Germain"})),  # right span, wrong entity
             GoldSpan(33, 39, frozenset({"France"})),  # boundary differs
             GoldSpan(46, 58, frozenset({"Paris Hilton"})),  # span not found
             GoldSpan(72, 78, frozenset({"Berlin"})),  # not among the candidates, though predicted right
             GoldSpan(5, 9, frozenset({"Nowhere"}))]  # not in the KB
    reachable = [True, True, True, True, False, None]
    predictions = [_mention(0, 4, "Lyon"), _mention(10, 29, "Paris"), _mention(33, 36, "France"),
                   _mention(72, 78, "Berlin"), _mention(40, 45, "While")]
    nil_spans = {(40, 45)}
    gold_outcomes, prediction_outcomes = classify_document(golds, reachable, nil_spans, predictions)
    assert gold_outcomes == ["linked correctly", "right span, wrong entity", "span boundary differs",
                             "span not found", "linked correctly", "gold entity not in the KB"]
    assert prediction_outcomes == ["correct", "gold span, wrong entity", "overlaps a gold mention, other offsets",
                                   "correct", "span of a NIL gold mention"]
    alone = classify_document([], [], set(), [_mention(0, 4, "Lyon")])
    assert alone == ([], ["no gold mention there"])


def test_each_gold_prediction_consumed_once() -> None:
    golds = [GoldSpan(0, 4, frozenset({"Lyon"}))] * 2
    outcomes, predicted = classify_document(golds, [True, True], set(), [_mention(0, 4, "Lyon")])
    assert outcomes == ["linked correctly", "right span, wrong entity"]
    assert predicted == ["correct"]


def test_reachability_follows_the_recorded_candidates(tiny_checkpoint: Path, tiny_kb: Path,
                                                      entqa_cache: Path) -> None:
    kb = load_kb(tiny_kb)
    linker = Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu",
                                    config_overrides={"top_k": len(kb), "cpu_precision": "fp32"})
    titles = ["France", "Paris Hilton", "Berlin", "Paris Saint-Germain"]  # the last is not in the tiny KB
    nif = NifDocument("http://example.org/doc#char=0,", TEXT,
                      tuple(NifAnnotation(TEXT.index(t), TEXT.index(t) + len(t), (dbpedia_uri(t),)) for t in titles))
    [document] = build_documents([nif], linker.builder, TitleLookup(kb))
    offsets = linker.builder.tokenize_document(TEXT).offsets
    recording = CandidateRecording(linker.reading)
    dataclasses.replace(linker, reading=recording).link(TEXT)
    assert len(recording.candidates) == len(document.passages) >= 2
    # K = the whole KB: every gold the KB holds is among the candidates of the passages holding it.
    assert reachability(document, offsets, recording.candidates) == [True, True, True, None]
    nothing = [np.empty(0, dtype=np.int64)] * len(document.passages)
    assert reachability(document, offsets, nothing) == [False, False, False, None]
