"""Cutting a corpus into sentence documents keeps every gold mention whole and at the right offsets."""
from __future__ import annotations

from bench.short_documents import sentence_documents
from nif.data_types import NifAnnotation, NifDocument

TEXT = "TENNIS - SAMPRAS WINS. Sampras beat Chang at the U.S. Open in New York!  Then he left?  "


def _annotation(surface: str, uri: str, occurrence: int = 0) -> NifAnnotation:
    start = -1
    for _ in range(occurrence + 1):
        start = TEXT.index(surface, start + 1)
    return NifAnnotation(start, start + len(surface), (uri,))


def test_sentences_become_documents_with_their_mentions_moved() -> None:
    golds = (_annotation("SAMPRAS", "http://dbpedia.org/resource/Pete_Sampras"),
             _annotation("Sampras", "http://dbpedia.org/resource/Pete_Sampras"),
             _annotation("U.S. Open", "http://dbpedia.org/resource/US_Open_(tennis)"),
             _annotation("New York", "http://dbpedia.org/resource/New_York_City"))
    pieces = sentence_documents(NifDocument("http://example.org/doc#char=0,88", TEXT, golds))
    # No cut after "U.S." (inside a mention); the trailing white space makes no document of its own.
    assert [p.text for p in pieces] == ["TENNIS - SAMPRAS WINS.", "Sampras beat Chang at the U.S. Open in New York!",
                                        "Then he left?"]
    assert [[(p.text[a.start:a.end], a.uris) for a in p.annotations] for p in pieces] == [
        [("SAMPRAS", golds[0].uris)],
        [("Sampras", golds[1].uris), ("U.S. Open", golds[2].uris), ("New York", golds[3].uris)],
        []]
    assert len({p.uri for p in pieces}) == 3
