"""Entity descriptions by index row, read from the KB, and carried by the linker's mentions."""
from __future__ import annotations

import json
from pathlib import Path

from annotator.kb.descriptions import DESCRIPTION_CHARS, EntityDescriptions
from annotator.kb.reading import read_kb
from annotator.pipeline.linker import Linker

RESOURCES = Path(__file__).resolve().parents[1] / "resources" / "annotator"


def test_descriptions_follow_the_kb_order_of_any_format() -> None:
    for kb in ("kb_shared.jsonl", "kb_blink.jsonl", "kb_kilt.jsonl"):
        entities = list(read_kb(RESOURCES / kb))
        descriptions = EntityDescriptions.from_kb(RESOURCES / kb)
        assert [descriptions[row] for row in range(len(descriptions))] == [entity.text for entity in entities]


def test_long_descriptions_are_cut_at_a_word(tmp_path: Path) -> None:
    kb = tmp_path / "kb.jsonl"
    long_text = "Zürich " + "word " * 100
    kb.write_text("\n".join(json.dumps({"title": title, "text": text}) for title, text in
                            [("Zürich", long_text), ("Bern", ""), ("Long", "x" * 500)]) + "\n", encoding="utf-8")
    descriptions = EntityDescriptions.from_kb(kb)
    assert len(descriptions[0]) <= DESCRIPTION_CHARS and descriptions[0].startswith("Zürich word")
    assert descriptions[0].endswith("word…")
    assert descriptions[1] == ""
    assert descriptions[2] == "x" * (DESCRIPTION_CHARS - 1) + "…"
    assert descriptions[3] == "" and EntityDescriptions.none()[0] == ""


def test_linked_mentions_carry_their_entity_description(tiny_linker: Linker) -> None:
    texts = {entity.title: entity.text for entity in read_kb(RESOURCES / "kb_shared.jsonl")}
    mentions = [mention for mention in tiny_linker.link("Ada Lovelace met Charles Babbage in London.")
                if mention.title is not None]
    assert mentions
    assert all(mention.description == texts[mention.title] for mention in mentions)
