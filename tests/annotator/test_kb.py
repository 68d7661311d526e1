"""Tests for annotator.kb.reading: the three KB formats, gzip, and format errors."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from annotator.data_types import Entity
from annotator.errors import KBFormatError
from annotator.kb.reading import kb_fingerprint, read_kb

from tests.conftest import RESOURCES


def test_shared_format_keeps_title_only_entries(tiny_kb: Path) -> None:
    entities = list(read_kb(tiny_kb))
    assert len(entities) == 12
    assert entities[0] == Entity("Paris", "Paris is the capital and largest city of France, on the river Seine.", "Q90")
    assert entities[10] == Entity("Café", "", None)


def test_blink_format() -> None:
    assert list(read_kb(RESOURCES / "kb_blink.jsonl")) == [
        Entity("Ada Lovelace", "Ada Lovelace was an English mathematician."),
        Entity("Zürich", "Zürich is the largest city in Switzerland."),
    ]


def test_kilt_format_drops_the_title_paragraph_and_section_headings() -> None:
    assert list(read_kb(RESOURCES / "kb_kilt.jsonl")) == [
        Entity("Ada Lovelace", "Ada Lovelace was an English mathematician. She was born in London.", "Q7259"),
        Entity("Zürich", "", None),
    ]


def test_gzip_reads_like_plain(tmp_path: Path, tiny_kb: Path) -> None:
    packed = tmp_path / "entities.jsonl.gz"
    packed.write_bytes(gzip.compress(tiny_kb.read_bytes()))
    assert list(read_kb(packed)) == list(read_kb(tiny_kb))


def test_unknown_record_names_the_line_and_the_expected_keys() -> None:
    with pytest.raises(KBFormatError, match=r"kb_unknown.jsonl:2: .*\['description', 'name'\].*wikipedia_title"):
        list(read_kb(RESOURCES / "kb_unknown.jsonl"))


def test_line_that_is_not_json(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"title": "A", "text": ""}\n{"title": \n', encoding="utf-8")
    with pytest.raises(KBFormatError, match="broken.jsonl:2: not a JSON object"):
        list(read_kb(broken))


def test_fingerprint_follows_content_not_path(tmp_path: Path, tiny_kb: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(tiny_kb.read_bytes())
    assert kb_fingerprint(copy) == kb_fingerprint(tiny_kb)
    copy.write_bytes(tiny_kb.read_bytes() + b"\n")
    assert kb_fingerprint(copy) != kb_fingerprint(tiny_kb)
