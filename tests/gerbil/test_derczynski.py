"""GERBIL's Derczynski IPM NEL reader: token text, B-/I- mentions, NIL as emerging entity."""
from __future__ import annotations

from pathlib import Path

from gerbil.derczynski import read_documents
from gerbil.uris import is_in_kb


def test_reads_tweets(resources: Path) -> None:
    with (resources / "derczynski.conll").open(encoding="utf-8") as lines:
        first, second = read_documents(lines)
    assert first.uri == "http://derczynski/0"
    assert first.text == "Ada Lovelace rocks Grimbleton ! "  # GERBIL keeps the trailing space
    mentions = [(first.text[a.start:a.end], a.uris) for a in first.annotations]
    assert mentions == [("Ada Lovelace", ("http://dbpedia.org/resource/Ada_Lovelace",)),
                        ("Grimbleton", ("http://derczynski/notInWiki/Grimbleton",))]
    assert not is_in_kb(first.annotations[1].uris)
    # The last tweet counts even without a blank line after it.
    assert second.text == "Paris tonight "
    assert [(a.start, a.end) for a in second.annotations] == [(0, 5)]
