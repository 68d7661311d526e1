"""Second-stage candidates: entities the document already linked, for the words the first pass left unlinked.

Retrieval sees one 32-wordpiece passage, so a later "Bailey" or "WASHINGTON" often retrieves no Donovan Bailey
or MaliVai Washington even after the document has linked the full name (on AIDA-A dev, 149 of the 547 gold
mentions never among their passages' candidates are such references; docs/decisions.md#document-candidates). The reader then
scores the passage against those entities too; end to end, only spans that overlap no first-pass mention are
added, and given spans (D2KB) are disambiguated again over all their candidates.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from annotator.kb.titles import without_qualifier
from annotator.model.tokenization import Passage
from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.stages import Reading

WORD = re.compile(r"\w+(?:[.'&-]\w+)*")
# Words that many titles share: matching them would pull in unrelated entities ("Manchester United" for
# "United States").
GENERIC_TITLE_WORDS = frozenset({"the", "of", "and", "in", "on", "at", "for", "de", "la", "le", "a", "an", "to", "fc",
                                 "national", "team", "football", "cricket", "club", "party", "city", "county",
                                 "university", "united", "new", "st"})


def title_words(title: str) -> frozenset[str]:
    """The lower-cased words of `title` that tie a mention to it: no qualifier ("Peter Such (cricketer)": no mention
    says "cricketer"), no generic words."""
    return frozenset(w.lower() for w in WORD.findall(without_qualifier(title))) - GENERIC_TITLE_WORDS


@dataclass(frozen=True, eq=False)
class DocumentCandidates:
    """The second stage as a post-processor: each passage read again against its document candidates
    (`document_candidates`), in one set of reader batches for all documents, and the document decoded again."""

    titles: Sequence[str]  # KB titles by row

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        """End to end, the mentions found outside the first pass's are added; given spans (D2KB) are disambiguated
        again over all their candidates."""
        # NIL answers (given spans) suggest nothing: their entities were not linked.
        extra = [document_candidates(document.text, document.passages, [s.rows for s in document.scores],
                                     [s for s in document.links if s.is_linked(decoding.threshold)], self.titles,
                                     given=document.given)
                 for document in documents]
        if not any(len(rows) for document_rows in extra for rows in document_rows):
            return
        for document, extra_scores in zip(documents, reading.scores(documents, extra)):
            if any(len(s.rows) for s in extra_scores):
                document.scores = [s.extended(e) for s, e in zip(document.scores, extra_scores)]
                document.add_links(decoding.links(document))


def document_candidates(text: str, passages: Sequence[Passage], retrieved: Sequence[Iterable[int]],
                        linked: Sequence[LinkedSpan], titles: Sequence[str],
                        given: Sequence[tuple[int, int]] | None = None) -> list[np.ndarray]:
    """Per passage, the KB rows linked in the document that the passage did not retrieve and whose title shares
    a word with a capitalised word of the passage that is still open: outside every linked span end to end, or
    inside a given span (D2KB, where the first pass may have chosen wrong).

    Args:
        text: the document.
        passages: its passages.
        retrieved: KB rows already among each passage's candidates.
        linked: the first pass's mentions of the document.
        titles: KB titles by row.
        given: the (start, end) spans to link, for D2KB.
    """
    words = {span.entity: title_words(titles[span.entity]) for span in linked}
    result = []
    for passage, rows in zip(passages, retrieved):
        begin, end = passage.characters
        open_words = {m.group().lower() for m in open_capitalised_words(text, linked, given, begin, end)}
        have = set(rows)
        result.append(np.array(sorted(r for r, w in words.items() if r not in have and w & open_words),
                               dtype=np.int64))
    return result


def open_capitalised_words(text: str, linked: Sequence[LinkedSpan], given: Sequence[tuple[int, int]] | None = None,
                           begin: int = 0, end: int | None = None) -> list[re.Match[str]]:
    """The capitalised words of `text[begin:end]` still open: starting outside every linked span end to end, or
    inside a given span (D2KB)."""
    return [m for m in WORD.finditer(text, begin, len(text) if end is None else end)
            if m.group()[0].isupper() and _is_open(m.start(), linked, given)]


def _is_open(position: int, linked: Sequence[LinkedSpan], given: Sequence[tuple[int, int]] | None) -> bool:
    if given is not None:
        return any(start <= position < end for start, end in given)
    return not any(span.start <= position < span.end for span in linked)
