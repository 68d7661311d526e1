"""The name test (issue 78's fast path): which pairs the reader reads, and the fast path's links on hand-made
documents against the full path's over the same candidates, on the tiny checkpoint."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from annotator.knowledge import build_knowledge
from annotator.pipeline.document import Document
from annotator.pipeline.linker import Linker
from annotator.pipeline.mention_table import MentionTable
from annotator.pipeline.name_test import NameTest
from annotator.pipeline.reading import CutEntities
from annotator.training.data import load_kb

from tests.conftest import TINY_RUNTIME

DOCUMENTS = [
    "Paris Hilton flew from Paris to Berlin, Germany's capital, before Ada Lovelace's talk in Zürich.",
    "SOCCER - Lyon beat Paris in Zürich while Ada Lovelace watched from São Paulo; later the team flew over Mount "
    "Everest to Berlin, Germany.",
    "The weather was mild and the market closed higher on Tuesday, traders said.",
    "Cafe owners by Lake Geneva wrote Python code in the U.S. all week.",
]


@pytest.fixture(scope="module")
def fast(tiny_checkpoint: Path, tiny_kb: Path, entqa_cache: Path) -> Linker:
    """The tiny linker with the name test, a pair it rules out left out of the softmax (stand-in -1e9)."""
    return Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu", runtime=TINY_RUNTIME,
                                  config_overrides={"threshold": 0.0, "name_test": True, "name_test_stand_in": -1e9})


@dataclasses.dataclass(frozen=True)
class PassedRetrieval:
    """A retrieval that keeps only the candidates the name test passes: the full path over the fast path's pairs."""

    retrieval: object
    test: NameTest

    def candidates(self, documents: Sequence[Document]) -> list[list[np.ndarray]]:
        found = self.retrieval.candidates(documents)
        return [[rows[keep] for rows, keep in zip(document_rows, self.test.readable(document, document_rows))]
                for document, document_rows in zip(documents, found)]

    def describe(self) -> dict:
        return self.retrieval.describe()


def test_the_test_reads_the_names_in_a_passage(tiny_linker: Linker, tiny_kb: Path) -> None:
    titles = tiny_linker.index.titles
    row = {title: i for i, title in enumerate(titles)}
    priors = build_knowledge(load_kb(tiny_kb), MentionTable.from_links([("U.S.", "Germany")]), {"test": 1},
                             progress=False).priors
    test = NameTest(titles, priors, stand_in=0.0)
    document = Document.tokenized(DOCUMENTS[0], None, tiny_linker.builder)
    every = np.arange(len(titles))
    keep = test.readable(document, [every] * len(document.passages))
    passed = {titles[j] for k in keep for j in np.flatnonzero(k)}
    # "Germany's" holds Germany; a qualifier or a generic word ties nothing
    assert {"Paris", "Paris Hilton", "Berlin", "Germany", "Ada Lovelace", "Zürich"} <= passed
    assert {"Mount Everest", "Python (programming language)", "Lake Geneva"}.isdisjoint(passed)
    us = Document.tokenized(DOCUMENTS[3], None, tiny_linker.builder)
    us_keep = test.readable(us, [every] * len(us.passages))
    assert any(k[row["Germany"]] for k in us_keep), "a name the priors give the entity (U.S. here) passes"
    assert any(k[row["Python (programming language)"]] for k in us_keep)
    assert any(k[row["Café"]] for k in us_keep), "accents folded"


def test_a_word_that_begins_with_a_title_word_or_writes_its_initials_passes(tiny_linker: Linker) -> None:
    titles = tiny_linker.index.titles
    test = NameTest(titles, None, stand_in=0.0)
    document = Document.tokenized("Berliners cheered in SP, by the LG shore; #MountEverest and Adams too.", None,
                                  tiny_linker.builder)
    keep = test.readable(document, [np.arange(len(titles))] * len(document.passages))
    passed = {titles[j] for k in keep for j in np.flatnonzero(k)}
    # a word begun by a title word of four letters or more; capitals of the title's initials; the title run together
    assert {"Berlin", "São Paulo", "Lake Geneva", "Mount Everest"} <= passed
    # "Adams" begins with "Ada", shorter than a stem; lower-case initials ("in", "by") are words, not acronyms
    assert {"Ada Lovelace", "Paris", "Germany", "Zürich"}.isdisjoint(passed)


@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_fast_path_links_as_the_full_path_over_the_pairs_it_reads(tiny_linker: Linker, fast: Linker,
                                                                       text: str) -> None:
    test = fast.reading.name_test
    full = dataclasses.replace(tiny_linker, retrieval=PassedRetrieval(tiny_linker.retrieval, test))
    spans = [(m.start, m.end) for m in tiny_linker.link(text)] or [(0, 3)]
    for given in (None, spans):
        got, want = fast.link(text, given), full.link(text, given)
        assert [(m.start, m.end, m.title) for m in got] == [(m.start, m.end, m.title) for m in want]
        # a given span none of whose passages reads a candidate is NIL on both paths: scored 0 by a pair not read
        # here, -1 (no candidate) there
        assert [max(m.score, 0.0) for m in got] == pytest.approx([max(m.score, 0.0) for m in want], abs=1e-5)


def test_the_test_rules_out_pairs_and_gives_them_no_span(tiny_linker: Linker, fast: Linker) -> None:
    documents = [Document.tokenized(text, None, fast.builder) for text in DOCUMENTS]
    candidates = fast.retrieval.candidates(documents)
    keeps = [fast.reading.name_test.readable(d, c) for d, c in zip(documents, candidates)]
    assert 0 < sum(int(k.sum()) for ks in keeps for k in ks) < sum(len(r) for rs in candidates for r in rs)
    tested, read = fast.reading.scores(documents, candidates), tiny_linker.reading.scores(documents, candidates)
    for document_keeps, document_tested, document_read in zip(keeps, tested, read):
        for keep, t, r in zip(document_keeps, document_tested, document_read):
            np.testing.assert_array_equal(t.rows, r.rows)
            np.testing.assert_allclose(t.start[keep], r.start[keep], atol=1e-5)
            np.testing.assert_allclose(t.rerank[keep], r.rerank[keep], atol=1e-5)
            assert (t.rerank[~keep] == -1e9).all()
            assert (t.start[~keep][:, 0] == 0).all() and np.isneginf(t.start[~keep][:, 1:]).all()


def test_cut_entities_end_in_sep(tiny_linker: Linker) -> None:
    index = tiny_linker.reading.index
    rows = np.arange(len(tiny_linker.index.titles))
    ids, lengths = index.entity_rows(rows)
    cut_ids, cut_lengths = CutEntities(index, 6, tiny_linker.builder.sep_id).entity_rows(rows)
    assert (cut_lengths == np.minimum(lengths, 6)).all()
    for row, n in zip(cut_ids, cut_lengths):
        assert row[n - 1] == tiny_linker.builder.sep_id
    np.testing.assert_array_equal(cut_ids[:, :5], ids[:, :5])  # the first wordpieces as stored
