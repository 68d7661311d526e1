"""Written initials: a name written with a middle initial names the candidate whose title has that initial.

"George W. Bush" and *George H. W. Bush* differ by one letter, and the uncased reader, trained on news of 1996
when only the father had been president, barely tells them apart (docs/results/exact-title-tie-break-2026-11-29.md).
A writer who puts a middle initial into a name means it. When a linked span's text is a name with a middle initial
and its entity's title spells the name otherwise, a described candidate of the span's passages whose title is the
span's text, initials and all, takes the link. Titles and text are compared word by word, ignoring case and a
title's qualifier: "H.W." is "H. W.". Names written without one are left to the reader: people are often named
without their initials ("John Kennedy"), and leading initials are as often an acronym ("U.S. Open", whose tennis
event AIDA means, would take *U.S. Open (golf)*) or a short form ("J. Russell"). Title-only entries are not taken:
many are a benchmark's spelling of an entity the KB describes under its own title.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from annotator.kb.titles import without_qualifier
from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.stages import Reading

logger = logging.getLogger(__name__)

_INITIAL = re.compile(r"[A-Z]\.")
_JOINED_INITIAL = re.compile(r"\b([A-Z])\.\s*")  # "G.W. Bush" → "G. W. Bush"


def _words(name: str) -> list[str]:
    return _JOINED_INITIAL.sub(r"\1. ", name).split()


def name_words(name: str) -> tuple[str, ...]:
    """The words of a name, each initial a word of its own, in lower case."""
    return tuple(word.casefold() for word in _words(name))


def has_middle_initial(text: str) -> bool:
    """Whether the text is a name with a middle initial: a capital letter with a full stop between two words that
    are not initials ("George W. Bush", "John F. Kennedy"; not "U.S. Open" or "J. Russell")."""
    initial = [bool(_INITIAL.fullmatch(word)) for word in _words(text)]
    return len(initial) >= 3 and not initial[0] and not initial[-1] and any(initial[1:-1])


@dataclass(frozen=True, eq=False)
class WrittenInitials:
    """Written initials as a post-processor, for found and given spans alike. Nothing is read again; the link
    keeps its span and score."""

    titles: Sequence[str]  # KB titles by row
    described: np.ndarray  # (rows,) bool: whether each entity has a description

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            document.links = initials_links(document, self.titles, self.described)


def initials_links(document: Document, titles: Sequence[str], described: np.ndarray) -> list[LinkedSpan]:
    """The document's links, each whose text is a name with a middle initial that its entity's title spells otherwise
    given to the described candidate of its passages whose title is its text (the one the reader ranked first,
    if several)."""
    result = []
    for link in document.links:
        text = document.text[link.start:link.end]
        words = name_words(text)
        if has_middle_initial(text) and name_words(without_qualifier(titles[link.entity])) != words:
            entity = _spelled_candidate(document, link, words, titles, described)
            if entity is not None:
                logger.debug("written initials: %r takes %s, not %s", text, titles[entity], titles[link.entity])
                link = replace(link, entity=entity)
        result.append(link)
    return result


def _spelled_candidate(document: Document, link: LinkedSpan, words: tuple[str, ...], titles: Sequence[str],
                       described: np.ndarray) -> int | None:
    """The best-ranked described candidate, in the passages holding the link, whose title has exactly `words`."""
    best: tuple[float, int] | None = None
    for passage, scores in zip(document.passages, document.scores):
        start, end = passage.characters
        if not (start <= link.start and link.end <= end):
            continue
        for row, rerank in zip(scores.rows, scores.rerank):
            if (described[row] and name_words(without_qualifier(titles[row])) == words
                    and (best is None or rerank > best[0])):
                best = (float(rerank), int(row))
    return None if best is None else best[1]
