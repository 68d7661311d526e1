"""The title-only look: which candidates are read again, how their inputs are cut, and what it may change."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from annotator.model.config import LinkerConfig
from annotator.pipeline.document import Document, PassageScores
from annotator.pipeline.document_candidates import DocumentCandidates
from annotator.pipeline.full_titles import FullTitles
from annotator.pipeline.linker import Linker
from annotator.pipeline.national_teams import NationalTeams
from annotator.pipeline.title_answers import TitleAnswers
from annotator.pipeline.short_names import OtherBearers, ShortNames
from annotator.pipeline.spelling_variants import SpellingVariants
from annotator.pipeline.title_only_look import TitleOnlyEntities, TitleOnlyLook, rejected_candidates
from annotator.pipeline.web_addresses import WebAddresses
from annotator.pipeline.written_initials import WrittenInitials
from tests.conftest import TINY_RUNTIME
from tests.support.scripted_linker import ScriptedReading

TEXT = "Berlin and Paris are capitals."
MARKER, SEP = 2, 102
GAMMA = 0.02  # the shipped γ: a title-only reading at rerank logit 0 beside logits 3 and 2 gets p_rerank 0.035


class StoredInputs:
    """Two stored entity inputs: a described entity (`[CLS] 5 6 [marker] 7 8 [SEP]`) and a title-only one."""

    def entity_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        stored = {0: [101, 5, 6, MARKER, 7, 8, SEP], 1: [101, 9, SEP]}
        width = max(len(stored[int(r)]) for r in rows)
        return (np.array([stored[int(r)] + [0] * (width - len(stored[int(r)])) for r in rows]),
                np.array([len(stored[int(r)]) for r in rows]))


def test_descriptions_are_emptied_and_title_only_entries_kept() -> None:
    ids, lengths = TitleOnlyEntities(StoredInputs(), MARKER, SEP).entity_rows(np.array([0, 1, 0]))
    assert lengths.tolist() == [5, 3, 5]
    assert ids.tolist() == [[101, 5, 6, MARKER, SEP], [101, 9, SEP, 0, 0], [101, 5, 6, MARKER, SEP]]


@pytest.fixture()
def linker(tiny_linker: Linker) -> Linker:
    return dataclasses.replace(tiny_linker, decoding=dataclasses.replace(tiny_linker.decoding, threshold=GAMMA))


def _first_pass(linker: Linker, rows: Sequence[str], rerank: Sequence[float], marked: Sequence[str | None],
                given: Sequence[tuple[int, int]] | None = None) -> Document:
    """A one-passage document whose first reading ranks `rows` with `rerank` logits and marks, for each, the
    wordpieces of `marked` (None: [CLS], "no mention"), decoded."""
    document = Document.tokenized(TEXT, given, linker.builder)
    assert len(document.passages) == 1
    passage = document.passages[0]
    start, end = np.full((len(rows), 1 + len(passage.ids)), -20.0), np.full((len(rows), 1 + len(passage.ids)), -20.0)
    for k, word in enumerate(marked):
        if word is None:
            start[k, 0] = end[k, 0] = 20.0
            continue
        first = TEXT.index(word)
        covered = [1 + j for j, (s, e) in enumerate(passage.offsets) if first <= s and e <= first + len(word)]
        start[k, covered[0]], end[k, covered[-1]] = 20.0, 20.0
    titles = list(linker.index.titles)
    document.scores = [PassageScores(np.array([titles.index(t) for t in rows]), start, end, np.array(rerank))]
    document.links = linker.decoding.links(document)
    return document


def test_only_rejected_candidates_the_rerank_head_favours_are_read_again(linker: Linker) -> None:
    # Berlin is linked; Paris was ranked up but given no span; Paris Hilton was ranked down.
    document = _first_pass(linker, ["Berlin", "Paris", "Paris Hilton"], [3.0, 2.0, -1.0], ["Berlin", None, None])
    assert [linker.index.titles[r] for r in rejected_candidates(document, GAMMA)[0]] == ["Paris"]


def test_a_mention_found_title_only_is_added_outside_the_links(linker: Linker) -> None:
    document = _first_pass(linker, ["Berlin", "Paris", "Paris Hilton"], [3.0, 2.0, -1.0], ["Berlin", None, None])
    title_only = ScriptedReading(linker.builder, linker.index.titles)
    TitleOnlyLook(title_only).revise([document], reading=linker.reading, decoding=linker.decoding)
    assert title_only.reads == [[1]]  # Paris alone
    found = [(TEXT[s.start:s.end], linker.index.titles[s.entity]) for s in document.links]
    assert sorted(found) == [("Berlin", "Berlin"), ("Paris", "Paris")]


def test_given_spans_answered_nil_take_the_new_answer_and_the_others_keep_theirs(linker: Linker) -> None:
    berlin, paris = (0, 6), (TEXT.index("Paris"), TEXT.index("Paris") + 5)
    document = _first_pass(linker, ["Berlin", "Paris"], [3.0, 2.0], ["Berlin", None], given=[berlin, paris])
    before = list(document.links)
    assert before[0].is_linked(GAMMA) and not before[1].is_linked(GAMMA)
    TitleOnlyLook(ScriptedReading(linker.builder, linker.index.titles)).revise(
        [document], reading=linker.reading, decoding=linker.decoding)
    assert document.links[0] == before[0]
    assert linker.index.titles[document.links[1].entity] == "Paris" and document.links[1].is_linked(GAMMA)


def test_nothing_to_read_leaves_the_document_as_it_was(linker: Linker) -> None:
    document = _first_pass(linker, ["Berlin", "Paris Hilton"], [3.0, -1.0], ["Berlin", None])
    links = list(document.links)
    title_only = ScriptedReading(linker.builder, linker.index.titles)
    TitleOnlyLook(title_only).revise([document], reading=linker.reading, decoding=linker.decoding)
    assert title_only.reads == [] and document.links == links


def test_the_shipped_linker_looks_last_of_the_stages_that_read(tiny_checkpoint: Path, tiny_kb: Path) -> None:
    shipped = LinkerConfig()
    switches = {name: getattr(shipped, name) for name in ("document_candidates", "short_names", "title_only_look",
                                                          "written_initials", "full_titles", "title_answers",
                                                          "national_teams", "spelling_variants")}
    linker = Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu", runtime=TINY_RUNTIME,
                                    config_overrides=switches)
    # the stages after the look read nothing
    assert [type(stage) for stage in linker.post_processors] == [
        DocumentCandidates, ShortNames, TitleOnlyLook, WrittenInitials, FullTitles, NationalTeams, OtherBearers,
        TitleAnswers, SpellingVariants, WebAddresses]
    assert isinstance(linker.post_processors[2].reading.index, TitleOnlyEntities)
    assert not any(isinstance(stage, TitleOnlyLook) for stage in Linker.from_pretrained(
        tiny_checkpoint, kb_path=tiny_kb, device="cpu", runtime=TINY_RUNTIME).post_processors)  # the paper's setup
