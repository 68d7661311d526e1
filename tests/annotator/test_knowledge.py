"""The knowledge tables on a hand-made KB: the entity graph, prominence and the name priors' counts."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from annotator.errors import ModelLoadError
from annotator.knowledge import Knowledge, build_knowledge, name_key
from annotator.pipeline.mention_table import MentionTable
from annotator.training.data import KnowledgeBase

TITLES = ["Serena Williams", "Venus Williams", "Venus", "Williams", "New York City", "New York", "X",
          "United States", "Michael Jordan", "Jordan", "Chicago Bulls", "National Basketball Association"]
TEXTS = [
    "Serena Williams (born September 26, 1981) is an American tennis player from the United States. Her sister is "
    "Venus Williams.",
    "Venus Williams (born June 17, 1980) is an American tennis player. She has played against Serena Williams.",
    "Venus is the second planet from the Sun.",
    "",
    "New York City is the most populous city in the United States, in the state of New York. X marks it.",
    "New York is a state of the United States.",
    "",
    "The United States is a country in North America.",
    "Michael Jordan (born February 17, 1963) is an American former basketball player. He played for the Chicago "
    "Bulls in the National Basketball Association (NBA). Jordan won six titles.",
    "Jordan is a country in the Middle East.",
    "The Chicago Bulls are a basketball team in the National Basketball Association.",
    "The National Basketball Association (NBA) is a professional basketball league in North America.",
]
ROW = {title: row for row, title in enumerate(TITLES)}


@pytest.fixture(scope="module")
def knowledge() -> Knowledge:
    links = [("Serena", "Serena Williams")] * 3 + [("Venus", "Venus Williams")] * 2 + [("Venus", "Venus")]
    return build_knowledge(KnowledgeBase(TITLES, TEXTS), MentionTable.from_links(links), {"test": 1}, progress=False)


def named_by(knowledge: Knowledge, title: str) -> set[str]:
    row = ROW[title]
    return {TITLES[j] for j in knowledge.graph.indices[knowledge.graph.indptr[row]:knowledge.graph.indptr[row + 1]]}


def test_the_graph_takes_the_longest_title_and_no_self_or_one_letter_title(knowledge: Knowledge) -> None:
    # "New York City" holds "New York": only the longer one; the one-letter title "X" is never a name; the
    # description's own subject is no edge
    assert named_by(knowledge, "New York City") == {"United States", "New York"}
    assert "New York City" not in named_by(knowledge, "New York City")
    assert ROW["X"] not in set(knowledge.graph.indices.tolist())
    assert named_by(knowledge, "Serena Williams") == {"United States", "Venus Williams"}
    assert named_by(knowledge, "Michael Jordan") == {"Chicago Bulls", "National Basketball Association"}


def test_prominence_counts_the_descriptions_that_name_an_entry(knowledge: Knowledge) -> None:
    assert knowledge.in_links[ROW["United States"]] == 3
    assert knowledge.in_links[ROW["National Basketball Association"]] == 2
    assert knowledge.in_links[ROW["Jordan"]] == 0  # "Jordan won" in Michael Jordan's text is his surname
    # related either way
    assert ROW["Serena Williams"] in knowledge.neighbours(ROW["Venus Williams"])


def test_name_priors_keep_both_counts(knowledge: Knowledge) -> None:
    venus = knowledge.priors.lookup("Venus")
    counts = {TITLES[r]: (int(l), int(d)) for r, l, d in zip(venus.rows, venus.linked, venus.described)}
    assert counts["Venus Williams"][0] == 2 and counts["Venus"][0] == 1
    assert counts["Venus"][1] == 1  # its own description begins with the name
    serena = knowledge.priors.lookup("SERENA")  # folded: case and accents
    assert {TITLES[r]: int(l) for r, l in zip(serena.rows, serena.linked)} == {"Serena Williams": 3}
    # a person's surname from the own description; an acronym in brackets
    assert ROW["Michael Jordan"] in knowledge.priors.lookup("Jordan").rows.tolist()
    assert ROW["National Basketball Association"] in knowledge.priors.lookup("NBA").rows.tolist()
    # a title is always a name of its entry, even where nothing names it
    assert knowledge.priors.lookup("Williams").rows.tolist() == [ROW["Williams"]]
    assert len(knowledge.priors.lookup("Nobody at all")) == 0


def test_name_key_folds_case_accents_and_spaces() -> None:
    assert name_key("  Marcelo  Ríos ") == name_key("MARCELO RIOS") == "marcelo rios"


def test_tables_round_trip_and_refuse_another_identity(knowledge: Knowledge, tmp_path: Path) -> None:
    directory = knowledge.save(tmp_path / "knowledge")
    again = Knowledge.load(directory, identity={"test": 1})
    assert (again.graph != knowledge.graph).nnz == 0
    assert np.array_equal(again.in_links, knowledge.in_links)
    assert np.array_equal(again.priors.rows, knowledge.priors.rows)
    with pytest.raises(ModelLoadError, match="built from"):
        Knowledge.load(directory, identity={"test": 2})
