"""Tests for annotator.pipeline.title_matches and the given spans' title matches in the linker's retrieval."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from annotator.errors import ConfigError
from annotator.model.config import LinkerConfig
from annotator.pipeline.document import Document
from annotator.pipeline.linker import Linker
from annotator.pipeline.title_matches import TitleMatches
from annotator.settings import settings_from_variables
from tests.conftest import TINY_RUNTIME

TITLES = ["Taurus (constellation)", "Taurus (astrology)", "Taurus", "TAURUS", "Car", "Gossip (band)", "Gossip",
          "Lady gaga", "Lady Gaga", "Taurus Mountains"]
DESCRIBED = np.array([True, True, False, False, True, True, True, False, True, True])


def _matches(text: str, per_span: int = 5) -> list[str]:
    return [TITLES[row] for row in TitleMatches.from_titles(TITLES, DESCRIBED, per_span).rows(text)]


def test_a_text_matches_titles_ignoring_case_and_a_trailing_qualifier_the_exact_title_first() -> None:
    # the exact title, then described entries, then shorter titles, then in title order
    assert _matches("Taurus") == ["Taurus", "Taurus (astrology)", "Taurus (constellation)", "TAURUS"]
    assert _matches("taurus", per_span=2) == ["Taurus (astrology)", "Taurus (constellation)"]
    assert _matches("gossip") == ["Gossip", "Gossip (band)"]
    assert _matches("Lady gaga") == ["Lady gaga", "Lady Gaga"]
    assert _matches("car") == ["Car"]
    assert _matches("Taurus Mountain") == [] and _matches("") == [] and _matches("astrology") == []


def test_an_index_without_its_kb_ranks_without_descriptions() -> None:
    matches = TitleMatches.from_titles(TITLES, np.zeros(0, dtype=bool), 5)
    assert [TITLES[row] for row in matches.rows("taurus")] == ["TAURUS", "Taurus", "Taurus (astrology)",
                                                              "Taurus (constellation)"]


def test_matches_follow_the_retrieved_candidates_of_the_passages_that_hold_the_span() -> None:
    matches = TitleMatches.from_titles(TITLES, DESCRIBED, 2)

    text = "She saw the Taurus sign, and a car."
    # what `added_to` reads of a Document: its text, given spans and passages' characters
    document = SimpleNamespace(text=text, passages=[SimpleNamespace(characters=(0, 20)),
                                                    SimpleNamespace(characters=(12, len(text))),
                                                    SimpleNamespace(characters=(14, len(text)))],
                               given=[(text.index("Taurus"), text.index(" sign")), (text.index("car"), len(text) - 1)])
    retrieved = [np.array([4, 9]), np.array([2]), np.array([2])]
    added = matches.added_to([retrieved], [document])[0]
    # "Taurus" lies in the first two passages, the third cuts it; "car" lies in the last two
    assert [[TITLES[row] for row in rows] for rows in added] == [
        ["Car", "Taurus Mountains", "Taurus", "Taurus (astrology)"], ["Taurus", "Taurus (astrology)", "Car"],
        ["Taurus", "Car"]]
    document.given = None  # end to end: no span is given, nothing is added
    assert [rows.tolist() for rows in matches.added_to([retrieved], [document])[0]] == [[4, 9], [2], [2]]


def test_the_linker_adds_the_matches_of_a_given_span_to_its_candidates(tiny_checkpoint: Path, tiny_kb: Path,
                                                                       tiny_linker: Linker) -> None:
    assert tiny_linker.retrieval.titles is None  # the paper's setup
    linker = Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu",
                                    config_overrides={"title_candidates": 3}, runtime=TINY_RUNTIME)
    text = "We met at the café by the lake, then walked for an hour."
    start, end = text.index("café"), text.index(" by")
    document = Document.tokenized(text, [(start, end)], linker.builder)
    assert len(document.passages) > 1
    cafe = linker.index.titles.index("Café")
    without = tiny_linker.retrieval.candidates([document])[0]
    for passage, rows, retrieved in zip(document.passages, linker.retrieval.candidates([document])[0], without):
        begin, stop = passage.characters
        wanted = [cafe] if begin <= start and end <= stop and cafe not in retrieved else []
        assert rows.tolist() == retrieved.tolist() + wanted
    assert linker.describe()["title_matches"] == "up to 3 per given span"
    assert [(m.start, m.end) for m in linker.link(text, spans=[(start, end)])] == [(start, end)]


def test_title_candidates_are_on_in_the_shipped_setup_off_in_the_paper_and_set_from_the_environment() -> None:
    assert LinkerConfig().title_candidates == 3 and LinkerConfig.paper().title_candidates == 0
    assert settings_from_variables({"ENTQA_TITLE_CANDIDATES": "0"}).model == {"title_candidates": 0}
    with pytest.raises(ConfigError, match="title_candidates"):
        LinkerConfig(title_candidates=-1)


def test_titled_keeps_the_whole_titles_of_every_match_whatever_per_span() -> None:
    matches = TitleMatches.from_titles(TITLES, DESCRIBED, 1)
    assert [TITLES[row] for row in matches.titled("taurus")] == ["TAURUS", "Taurus"]
    assert [TITLES[row] for row in matches.titled("Gossip")] == ["Gossip"]
