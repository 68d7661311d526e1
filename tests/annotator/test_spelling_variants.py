"""Tests for annotator.pipeline.spelling_variants: an answer in an older spelling takes the entry as Wikipedia
titles it."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from annotator.model.config import LinkerConfig
from annotator.pipeline.document import Document
from annotator.pipeline.linker import Linker
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.spelling_variants import SpellingVariants

# title, described
KB = [("Chişinău", False), ("Chișinău", True), ("Ogun Temizkanoglu", False), ("Ogün Temizkanoğlu", False),
      ("Luis Oliveira", True), ("Luís Oliveira", False), ("Dance", True), ("Dańce", True),
      ("Intelligent network", False), ("Intelligent Network", True), ("Arab World", False), ("Arab world", False),
      ("Berlin", True)]
TITLES = [title for title, _ in KB]
DESCRIBED = np.array([described for _, described in KB])


def _moves() -> dict[str, str]:
    variants = SpellingVariants.from_titles(TITLES, DESCRIBED).variants
    return {TITLES[row]: TITLES[variant] for row, variant in variants.items()}


def test_each_group_of_variants_moves_to_the_most_accented_then_the_described_title() -> None:
    assert _moves() == {
        "Chişinău": "Chișinău",  # accents alike: the described one
        "Intelligent network": "Intelligent Network",  # letter case only
        "Ogun Temizkanoglu": "Ogün Temizkanoğlu",  # both title-only: the accented one
        "Luis Oliveira": "Luís Oliveira",  # the accent first, even over a description
    }
    # two described entries are two articles (Dance, the village Dańce); title-only copies alike in accents stay


def test_the_stage_moves_linked_spans_and_leaves_nil_ones(tiny_linker: Linker) -> None:
    text = "Chisinau and Berlin; Temizkanoglu."
    document = Document.tokenized(text, [(0, 8), (13, 19), (21, 33)], tiny_linker.builder)
    document.links = [LinkedSpan(0, 8, 0, 0.3), LinkedSpan(13, 19, 12, 0.5), LinkedSpan(21, 33, 2, 0.01)]
    SpellingVariants.from_titles(TITLES, DESCRIBED).revise(
        [document], reading=tiny_linker.reading, decoding=SimpleNamespace(threshold=0.02))  # type: ignore[arg-type]
    assert [(TITLES[s.entity], s.score) for s in document.links] == [
        ("Chișinău", 0.3), ("Berlin", 0.5), ("Ogun Temizkanoglu", 0.01)]  # the NIL answer is left as it is


def test_it_ships_on_and_is_not_the_papers() -> None:
    assert LinkerConfig().spelling_variants and not LinkerConfig.paper().spelling_variants


def test_titles_whose_folded_names_share_a_hash_but_differ_stay_apart(monkeypatch) -> None:
    # The folded names are counted by a 32-bit hash (an array, not a Counter of a million strings): rows of one
    # hash are grouped by their names again, so a collision joins no two names.
    import annotator.pipeline.spelling_variants as stage

    monkeypatch.setattr(stage.zlib, "crc32", lambda data: 7)  # every title collides
    assert _moves() == {"Chişinău": "Chișinău", "Intelligent network": "Intelligent Network",
                        "Ogun Temizkanoglu": "Ogün Temizkanoğlu", "Luis Oliveira": "Luís Oliveira"}
    assert SpellingVariants.from_titles([], np.zeros(0, dtype=bool)).variants == {}
