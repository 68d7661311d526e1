"""Tests for annotator.kb.cut: the naming count, the selection rule, the written KB and the cut index."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from annotator.data_types import Entity
from annotator.entity_index import COMPACT_VECTORS
from annotator.errors import ConfigError
from annotator.kb.reading import read_kb
from annotator.kb.cut import cut_index, name_counts, select_rows, surface_forms, write_kb
from annotator.pipeline.linker import Linker
from tests.support.entity_encoding import forbid_entity_encoding

ENTITIES = [
    Entity("Georgia (country)", "Georgia is a country in the Caucasus, east of the Black Sea."),
    Entity("Georgia (U.S. state)", ""),
    Entity("Black Sea", "The Black Sea lies between Europe and Asia; Georgia and Turkey border it."),
    Entity("Turkey", "Turkey borders Georgia. Turkeys are birds."),
    Entity("Tbilisi", "Tbilisi is the capital of Georgia, a Black Seaside city."),
    Entity("Sea", "A sea is a large body of salt water.", "Q165"),
    Entity("HSBC Holdings", "The HSBC Group is a British bank."),
    Entity("Arsenal F.C.", "Arsenal is a football club; it has played HSBC Holdings' team."),
]


def test_surface_forms_drop_a_trailing_qualifier_and_a_company_or_club_suffix() -> None:
    assert surface_forms("Georgia (U.S. state)") == {"Georgia"}
    assert surface_forms("Rome (TV series) 2") == {"Rome (TV series) 2"}
    assert surface_forms("HSBC Holdings") == {"HSBC Holdings", "HSBC"}
    assert surface_forms("Arsenal F.C.") == {"Arsenal F.C.", "Arsenal"}
    assert surface_forms("Google, Inc.") == {"Google, Inc.", "Google"}
    assert surface_forms("Group") == {"Group"}


def test_name_counts_are_other_entries_naming_the_capitalised_surface_between_word_boundaries() -> None:
    counts = dict(zip((e.title for e in ENTITIES), name_counts(ENTITIES).tolist()))
    # "Georgia" in Black Sea, Turkey and Tbilisi names both Georgias; the country's own text names only the state.
    assert counts["Georgia (country)"] == 3 and counts["Georgia (U.S. state)"] == 4
    # Black Sea: by Georgia only ("Black Seaside" is no word boundary); Turkey: by Black Sea ("Turkeys" is not).
    assert counts["Black Sea"] == 1 and counts["Turkey"] == 1
    # "Sea" is only ever inside the longer name "Black Sea"; lower-case "sea" is not a name.
    assert counts["Sea"] == 0 and counts["Tbilisi"] == 0
    # By either form, each naming entry once; its own description ("The HSBC Group") does not count.
    assert counts["HSBC Holdings"] == 1 and counts["Arsenal F.C."] == 0


def test_select_rows_keeps_the_named_and_the_described_with_a_qid_in_kb_order() -> None:
    counts = name_counts(ENTITIES)
    assert select_rows(ENTITIES, counts, min_named=2).tolist() == [0, 1, 5]
    assert select_rows(ENTITIES, counts, min_named=1).tolist() == [0, 1, 2, 3, 5, 6]


def test_write_kb_is_reproducible_shared_format(tmp_path: Path) -> None:
    write_kb(ENTITIES, np.array([0, 3]), tmp_path / "a.jsonl.gz")
    write_kb(ENTITIES, np.array([0, 3]), tmp_path / "b.jsonl.gz")
    assert (tmp_path / "a.jsonl.gz").read_bytes() == (tmp_path / "b.jsonl.gz").read_bytes()
    assert list(read_kb(tmp_path / "a.jsonl.gz")) == [ENTITIES[0], ENTITIES[3]]


def test_cut_index_serves_the_cut_kb_without_encoding(tiny_linker: Linker, tiny_kb: Path, tiny_checkpoint: Path,
                                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entities = list(read_kb(tiny_kb))
    rows = np.array([0, 2, 5, 7])
    write_kb(entities, rows, tmp_path / "cut.jsonl.gz")
    cut_index(tiny_linker.index.directory, rows, full_kb=tiny_kb, kb_path=tmp_path / "cut.jsonl.gz",
              out=tmp_path / "index")
    assert (tmp_path / "index" / COMPACT_VECTORS).is_file() and not (tmp_path / "index" / "embeddings.npy").exists()
    forbid_entity_encoding(monkeypatch)
    linker = Linker.from_pretrained(tiny_checkpoint, kb_path=tmp_path / "cut.jsonl.gz", index_dir=tmp_path / "index",
                                    device="cpu")
    full = tiny_linker.index
    assert linker.index.titles == [full.titles[r] for r in rows]
    assert np.array_equal(linker.index.entity_ids, full.entity_ids[rows])
    # 8-bit codes over each dimension's range: every vector within a few thousandths of the float16 one.
    assert np.abs(linker.index.embeddings.astype(np.float32) - full.embeddings[rows].astype(np.float32)).max() < 0.01


def test_cut_index_refuses_an_index_of_another_kb(tiny_linker: Linker, tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"title": "Elsewhere", "text": "", "qid": None}) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not the whole index"):
        cut_index(tiny_linker.index.directory, np.array([0]), full_kb=other, kb_path=other, out=tmp_path / "index")
