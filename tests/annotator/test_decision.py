"""The learned decision on hand-made documents: its features, its choices, its file and its refusals."""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import lightgbm
import numpy as np
import pytest

from annotator.decision.features import FEATURES, SpanCandidates, document_candidates
from annotator.decision.model import Decision, DecisionSettings, reader_identity
from annotator.decision.training import Examples, read_corpus_folds, reader_agreement
from annotator.decision.stage import LearnedDecision
from annotator.errors import ModelLoadError
from annotator.knowledge import Knowledge, build_knowledge
from annotator.pipeline.document import Document, PassageScores
from annotator.pipeline.linker import Linker
from annotator.pipeline.mention_table import MentionTable
from annotator.training.data import CorpusDocument, GoldLink, fold_numbers, load_kb

TEXT = "Paris Hilton flew from Paris to Berlin."
F = {name: i for i, name in enumerate(FEATURES)}
MARKS = {"Paris Hilton": (0, 12), "Paris": (23, 28), "Berlin": (32, 38)}


@pytest.fixture(scope="module")
def knowledge(tiny_kb: Path) -> Knowledge:
    links = [("Paris", "Paris")] * 4 + [("Paris", "Paris Hilton")]
    return build_knowledge(load_kb(tiny_kb), MentionTable.from_links(links), {"test": 1}, progress=False)


def read(linker: Linker, marks: dict[str, tuple[int, int]], given: Sequence[tuple[int, int]] | None = None,
         text: str = TEXT) -> Document:
    """A document whose every passage reads each candidate title of `marks` with its span on the characters named
    there (a sure span, rerank logit 2), decoded at γ."""
    document = Document.tokenized(text, given, linker.builder)
    titles = list(linker.index.titles)
    scores = []
    for passage in document.passages:
        rows = [titles.index(title) for title in marks]
        start = np.full((len(rows), 1 + len(passage.ids)), -20.0)
        end = start.copy()
        for k, (first, last) in enumerate(marks.values()):
            covered = [1 + j for j, (s, e) in enumerate(passage.offsets) if first <= s and e <= last]
            if covered:
                start[k, covered[0]] = end[k, covered[-1]] = 20.0
            else:
                start[k, 0] = end[k, 0] = 20.0
        scores.append(PassageScores(np.array(rows), start, end, np.full(len(rows), 2.0)))
    document.scores = scores
    document.links = linker.decoding.links(document)
    return document


def candidates(linker: Linker, document: Document, knowledge: Knowledge) -> list[SpanCandidates]:
    return document_candidates(document, linker.index.titles, linker.descriptions.described(), knowledge, top_k=4,
                               threshold=0.02, found_threshold=0.002, top_spans=3, max_span_len=10)


def test_features_of_given_spans(tiny_linker: Linker, knowledge: Knowledge) -> None:
    document = read(tiny_linker, MARKS,
                    given=[(0, 12), (23, 28)])
    spans = candidates(tiny_linker, document, knowledge)
    assert [(s.start, s.end) for s in spans] == [(0, 12), (23, 28)]
    paris = spans[1]
    titles = [tiny_linker.index.titles[r] for r in paris.rows]
    row = paris.features[titles.index("Paris")]
    assert row[F["given"]] == 1 and row[F["exact"]] == 1 and row[F["p_linked"]] == pytest.approx(0.8)
    hilton = paris.features[titles.index("Paris Hilton")]
    assert hilton[F["exact"]] == 0 and hilton[F["first_word"]] == 1 and hilton[F["p_linked"]] == pytest.approx(0.2)
    assert row[F["prior_rank"]] == 0 and hilton[F["prior_rank"]] == 1
    assert row[F["score"]] > hilton[F["score"]]  # the reader put Paris's span there
    assert row[F["in_links"]] == 0 and row[F["related_links"]] == 0  # the tiny KB's descriptions name no Paris
    first = spans[0].features[[tiny_linker.index.titles[r] for r in spans[0].rows].index("Paris Hilton")]
    assert first[F["exact"]] == 1 and first[F["in_longer_name"]] == 0


def test_a_name_nothing_counts_ranks_no_entry(tiny_linker: Linker, knowledge: Knowledge) -> None:
    # "Lake Geneva" names its title-only entry at count 0: no link, no description says it
    document = read(tiny_linker, {"Lake Geneva": (0, 11)}, given=[(0, 11)], text="Lake Geneva froze.")
    span, = candidates(tiny_linker, document, knowledge)
    lake = span.features[[tiny_linker.index.titles[r] for r in span.rows].index("Lake Geneva")]
    assert lake[F["linked"]] == 0 and lake[F["described_by_name"]] == 0 and lake[F["prior_rank"]] == 99


def test_held_out_links_leave_the_priors(tiny_linker: Linker, knowledge: Knowledge) -> None:
    document = read(tiny_linker, {"Paris": MARKS["Paris"]}, given=[(23, 28)])
    titles = tiny_linker.index.titles
    held = document_candidates(document, titles, tiny_linker.descriptions.described(), knowledge, top_k=4,
                               threshold=0.02, found_threshold=0.002, top_spans=3, max_span_len=10,
                               held_out={"paris": {list(titles).index("Paris"): 4}})
    assert held[0].features[0, F["p_linked"]] == 0 and held[0].features[0, F["linked"]] == 0


def toy_decision(threshold: float = 0.5) -> Decision:
    """A model that learned "the exact title is right" from hand-made rows."""
    rng = np.random.default_rng(0)
    features = rng.random((400, len(FEATURES))).astype(np.float32)
    features[:, F["exact"]] = rng.integers(0, 2, 400)
    labels = features[:, F["exact"]]
    booster = lightgbm.train({"objective": "binary", "verbose": -1, "num_threads": 1, "min_data_in_leaf": 5},
                             lightgbm.Dataset(features, labels, feature_name=list(FEATURES)), num_boost_round=20)
    return Decision(booster, DecisionSettings(threshold, threshold, 0.002), {"reader": "r"})


def span(rows: Sequence[int], exact: Sequence[int], start: int = 0, end: int = 5) -> SpanCandidates:
    features = np.full((len(rows), len(FEATURES)), 0.5, dtype=np.float32)
    features[:, F["exact"]] = exact
    return SpanCandidates(start, end, np.array(rows), features)


def test_the_decision_picks_a_candidate_or_nil() -> None:
    decision = toy_decision()
    given = decision.links([span([3, 7], [0, 1]), span([4], [0], 6, 9)], given=True)
    assert [(link.start, link.entity) for link in given] == [(0, 7), (6, 4)]
    assert given[0].score > 0.5 and given[1].score == 0.0  # NIL: scored 0, below every γ
    found = decision.links([span([3, 7], [0, 1], 0, 5), span([8], [1], 2, 9), span([4], [0], 10, 12)], given=False)
    assert len(found) == 1 and found[0].entity in (7, 8)  # one of two overlapping spans; the unlikely one goes


def test_the_same_file_gives_the_same_links_and_a_mismatch_is_refused(tmp_path: Path, tiny_checkpoint: Path) -> None:
    folder = tmp_path / "model"
    (folder / "reader").mkdir(parents=True)
    (folder / "reader" / "model.safetensors").write_bytes(b"weights")
    reader = reader_identity(folder)
    decision = dataclasses.replace(toy_decision(), trained_on={"reader": reader})
    decision.save(folder)
    spans = [span([3, 7], [0, 1]), span([4, 5], [1, 0], 6, 9)]
    again = Decision.load(folder, reader_id=reader)
    assert again.links(spans, given=True) == decision.links(spans, given=True)
    with pytest.raises(ModelLoadError, match="another reader"):
        Decision.load(folder, reader_id=reader_identity(tiny_checkpoint))
    manifest = json.loads((folder / "decision" / "manifest.json").read_text())
    manifest["features"] = manifest["features"][:-1]
    (folder / "decision" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelLoadError, match="other features"):
        Decision.load(folder, reader_id=reader)
    with pytest.raises(ModelLoadError, match="holds none"):
        Decision.load(tmp_path / "nothing", reader_id=reader)


def test_the_stage_links_given_spans_in_order(tiny_linker: Linker, knowledge: Knowledge) -> None:
    document = read(tiny_linker, MARKS,
                    given=[(0, 12), (23, 28), (32, 38)])
    stage = LearnedDecision(toy_decision(), tiny_linker.index.titles, tiny_linker.descriptions.described(),
                            knowledge, tiny_linker.config)
    stage.revise([document], reading=tiny_linker.reading, decoding=tiny_linker.decoding)
    titles = tiny_linker.index.titles
    assert [(link.start, link.end, titles[link.entity]) for link in document.links] == [
        (0, 12, "Paris Hilton"), (23, 28, "Paris"), (32, 38, "Berlin")]


def test_a_checkpoint_loads_its_decision_and_refuses_another_readers(tiny_checkpoint: Path, tiny_kb: Path,
                                                                     entqa_cache: Path, tmp_path: Path) -> None:
    import shutil

    from tests.conftest import TINY_RUNTIME

    model = tmp_path / "checkpoint"
    shutil.copytree(tiny_checkpoint, model)
    dataclasses.replace(toy_decision(), trained_on={"reader": reader_identity(model)}).save(model)
    linker = Linker.from_pretrained(model, kb_path=tiny_kb, device="cpu", config_overrides={"decision": True},
                                    runtime=TINY_RUNTIME)
    assert any(isinstance(stage, LearnedDecision) for stage in linker.post_processors)
    mentions = linker.link(TEXT, [(0, 12), (23, 28)])
    assert [(m.start, m.end) for m in mentions] == [(0, 12), (23, 28)]
    dataclasses.replace(toy_decision(), trained_on={"reader": "another"}).save(model)
    with pytest.raises(ModelLoadError, match="another reader"):
        Linker.from_pretrained(model, kb_path=tiny_kb, device="cpu", config_overrides={"decision": True},
                               runtime=TINY_RUNTIME)


class _RecordingReader:
    """Stands in for a fold's reading linker: says which checkpoint read each text."""

    def __init__(self, checkpoint: Path) -> None:
        self.checkpoint = checkpoint

    def read(self, texts: Sequence[str], spans: Sequence) -> tuple[list[None], list[str]]:
        return [None] * len(texts), [f"{self.checkpoint.name} read {text} {spans_}" for text, spans_ in zip(texts, spans)]


def test_each_fold_is_read_by_the_checkpoint_trained_without_it(tmp_path: Path) -> None:
    corpus = [CorpusDocument(f"d{i}", f"text{i}", (GoldLink(0, 4, "Paris"),)) for i in range(5)]
    folds = fold_numbers(len(corpus), 2)
    readers = [tmp_path / "fold-1", tmp_path / "fold-2"]
    loaded = []

    def load(checkpoint: Path) -> _RecordingReader:
        loaded.append(checkpoint.name)
        return _RecordingReader(checkpoint)

    def cache(name: str) -> Path:
        return tmp_path / "readings" / f"{name}.pkl"

    read = read_corpus_folds(readers, load, corpus, folds, given=True, cache=cache)
    assert read == [f"fold-{f + 1} read text{i} [(0, 4)]" for i, f in enumerate(folds)]
    assert loaded == ["fold-1", "fold-2"] and folds == [0, 0, 0, 1, 1]
    found = read_corpus_folds(readers, load, corpus, folds, given=False, cache=cache)
    assert found[3] == "fold-2 read text3 None"
    assert sorted(p.name for p in (tmp_path / "readings").iterdir()) == [
        "fold1of2-found.pkl", "fold1of2-given.pkl", "fold2of2-found.pkl", "fold2of2-given.pkl"]
    # read again from the cache, no checkpoint loaded
    assert read_corpus_folds(readers, lambda c: pytest.fail("loaded"), corpus, folds, given=True, cache=cache) == read


def test_the_readers_agreement_counts_the_given_spans_it_gets_right() -> None:
    score = F["score"]
    features = np.zeros((5, len(FEATURES)), dtype=np.float32)
    # span 0: the gold scored 0.9 (right); span 1: the gold among the candidates, the best 0.01 (NIL at γ 0.02);
    # span 2: the gold not among its candidates
    features[:, score] = [0.9, 0.3, 0.01, 0.005, 0.7]
    rows = Examples(features, np.array([1, 0, 1, 0, 0], dtype=np.int8), np.zeros(5, dtype=np.int64),
                    np.array([0, 0, 1, 1, 2]), np.ones(5, dtype=bool))
    # four linked golds: one span had no candidates at all
    assert reader_agreement(rows, 4, 0.02) == {"gold_among_candidates": 0.5, "reader_right": 0.25,
                                               "nil_with_gold_among": 0.25}
