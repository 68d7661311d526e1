"""Tests for annotator.pipeline.mention_table and the linker's name candidates end to end."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from annotator.model.config import LinkerConfig
from annotator.errors import ConfigError, ModelLoadError
from annotator.pipeline.mention_table import MentionTable, with_name_candidates
from annotator.model.checkpoint import MENTION_TABLE
from annotator.pipeline.linker import Linker
from annotator.settings import settings_from_variables
from tests.conftest import TINY_RUNTIME
from tests.support.scripted_linker import scripted_linker

TITLES = ["England", "England national football team", "England cricket team", "Bank of England", "Ada Lovelace"]


def _table() -> MentionTable:
    return MentionTable.from_links([("England", "England national football team")] * 3
                                   + [("England", "England cricket team")] * 2 + [("England", "England")]
                                   + [("Bank of England", "Bank of England"), ("Lovelace", "Ada Lovelace"),
                                      ("Lovelace", "Lovelace (a title not in the KB)"),
                                      ("the bank", "Bank of England"), ("Bank\nof England", "Bank of England")])


def _names(table: MentionTable, text: str, ranges: list[tuple[int, int]], per_name: int = 3) -> list[list[str]]:
    candidates = table.rows(TITLES, per_name)
    return [[TITLES[row] for row in rows] for rows in candidates.for_passages(text, ranges)]


def test_entities_are_kept_most_frequent_first_and_lower_case_names_left_out(tmp_path: Path) -> None:
    table = _table()
    assert table.entities["England"] == (("England national football team", 3), ("England cricket team", 2),
                                         ("England", 1))
    assert "the bank" not in table.entities  # never looked up: passage names begin with a capital
    assert "Bank\nof England" not in table.entities
    table.save(tmp_path / "mentions.tsv")
    assert MentionTable.load(tmp_path / "mentions.tsv") == table


def test_names_and_titles_with_quotes_are_saved_as_they_are(tmp_path: Path) -> None:
    table = MentionTable.from_links([('"Weird Al" Yankovic', '"Weird Al" Yankovic'), ('Al "Bubba" Jones', '"Awesome"')])
    table.save(tmp_path / "mentions.tsv")
    assert MentionTable.load(tmp_path / "mentions.tsv") == table


@pytest.mark.parametrize("content, problem", [("surface\ttitle\tcount\n", "header"),
                                              ("name\ttitle\tcount\nEngland\tEngland\n", "line 2"),
                                              ("name\ttitle\tcount\nEngland\tEngland\tmany\n", "line 2")])
def test_a_malformed_table_is_refused_with_its_line(tmp_path: Path, content: str, problem: str) -> None:
    (tmp_path / "mentions.tsv").write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=problem):
        MentionTable.load(tmp_path / "mentions.tsv")


def test_a_passage_gets_the_top_entities_of_each_whole_name_inside_it() -> None:
    text = "England beat Lovelace XI. The Bank of England said so."
    whole = [(0, len(text))]
    assert _names(_table(), text, whole) == [["England national football team", "England cricket team", "England",
                                              "Ada Lovelace", "Bank of England"]]
    assert _names(_table(), text, whole, per_name=1) == [["England national football team", "Ada Lovelace",
                                                         "Bank of England"]]
    # A window sees only the names wholly inside it: not "Lovelace" cut at either end, nor "Bank of" alone.
    inside = text.index("Lovelace") + 2
    assert _names(_table(), text, [(0, inside), (inside, text.index("of") + 2)], per_name=1) == [
        ["England national football team"], []]


def test_name_candidates_follow_the_retrieved_ones_without_repeating_them() -> None:
    retrieved = [np.array([4, 0]), np.array([2])]
    merged = with_name_candidates(retrieved, [[0, 1, 3], []])
    assert [rows.tolist() for rows in merged] == [[4, 0, 1, 3], [2]]


def test_the_linker_reads_the_entities_the_table_gives_a_name(tiny_linker: Linker) -> None:
    # Scripted retrieval finds no whole title in "Lovelace wrote ..." and offers only Paris; the scripted reader
    # marks a candidate's last title word, so "Lovelace" is linked once the table supplies Ada Lovelace.
    text = "Lovelace wrote the notes."
    assert scripted_linker(tiny_linker, threshold=0.05).link(text) == []
    names = MentionTable.from_links([("Lovelace", "Ada Lovelace")]).rows(tiny_linker.index.titles, 3)
    scripted = scripted_linker(tiny_linker, threshold=0.05, names=names)
    assert [(m.surface, m.title) for m in scripted.link(text)] == [("Lovelace", "Ada Lovelace")]
    assert scripted.reading.reads == [[2]]  # Paris and Ada Lovelace


def test_mention_candidates_are_on_in_the_shipped_setup_off_in_the_paper_and_set_from_the_environment() -> None:
    assert LinkerConfig().mention_candidates == 3 and LinkerConfig.paper().mention_candidates == 0
    assert settings_from_variables({"ENTQA_MENTION_CANDIDATES": "0"}).model == {"mention_candidates": 0}
    with pytest.raises(ConfigError, match="mention_candidates"):
        LinkerConfig(mention_candidates=-1)


def test_the_checkpoint_table_is_loaded_when_the_config_asks(tmp_path: Path, tiny_checkpoint: Path, tiny_kb: Path,
                                                            tiny_linker: Linker) -> None:
    checkpoint = Path(shutil.copytree(tiny_checkpoint, tmp_path / "checkpoint"))
    overrides = {"mention_candidates": 2}
    with pytest.raises(ModelLoadError, match="mentions.tsv does not exist"):
        Linker.from_pretrained(checkpoint, kb_path=tiny_kb, device="cpu", config_overrides=overrides,
                               runtime=TINY_RUNTIME)
    (checkpoint / MENTION_TABLE).write_text("Lovelace\tAda Lovelace\t1\n", encoding="utf-8")
    with pytest.raises(ModelLoadError, match="header"):
        Linker.from_pretrained(checkpoint, kb_path=tiny_kb, device="cpu", config_overrides=overrides,
                               runtime=TINY_RUNTIME)
    MentionTable.from_links([("Lovelace", "Ada Lovelace"), ("Lovelace", "Paris"), ("Lovelace", "Paris"),
                             ("Lovelace", "France")]).save(checkpoint / MENTION_TABLE)
    linker = Linker.from_pretrained(checkpoint, kb_path=tiny_kb, device="cpu", config_overrides=overrides,
                                    runtime=TINY_RUNTIME)
    names = linker.retrieval.names
    assert names is not None
    assert {name: [linker.index.titles[row] for row in rows] for name, rows in names.rows_by_name.items()} \
        == {"Lovelace": ["Paris", "Ada Lovelace"]}
    assert linker.describe()["mention_table"] == "1 names, up to 2 entities each"
    assert tiny_linker.retrieval.names is None  # off in the paper's setup (TINY_CONFIG): it retrieves only
    assert tiny_linker.describe()["mention_table"] == "off"
