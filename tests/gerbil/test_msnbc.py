"""GERBIL's MSNBC reader: UTF-16 offsets, `*null*` kept, nested same-URI sub-spans dropped."""
from __future__ import annotations

from pathlib import Path

from gerbil.msnbc import read_documents

WIKI, DBR = "http://en.wikipedia.org/wiki/", "http://dbpedia.org/resource/"


def test_reads_problem_and_text(resources: Path) -> None:
    (doc,) = read_documents(resources / "msnbc")
    assert doc.uri == "http://msnbc/story1.txt"
    found = {doc.text[a.start:a.end]: a for a in doc.annotations}
    # Offsets count UTF-16 units in the XML; the emoji before "Ada" is two of them.
    assert set(found) == {"Ada Lovelace", "Babbage", "New York City", "New York"}
    assert set(found["Ada Lovelace"].uris) == {WIKI + "Ada_Lovelace", DBR + "Ada_Lovelace",
                                               "http://en.dbpedia.org/resource/Ada_Lovelace"}
    assert found["Babbage"].uris == ("*null*",)  # kept, and scored as an emerging entity


def test_nested_span_with_same_uri_dropped_other_nested_kept(resources: Path) -> None:
    (doc,) = read_documents(resources / "msnbc")
    surfaces = [doc.text[a.start:a.end] for a in doc.annotations]
    assert "York" not in surfaces  # inside "New York City" with the same URI
    assert "New York" in surfaces  # inside it too, but with another URI


def test_incomplete_instance_discarded(resources: Path) -> None:
    (doc,) = read_documents(resources / "msnbc")
    assert "today" not in [doc.text[a.start:a.end] for a in doc.annotations]
