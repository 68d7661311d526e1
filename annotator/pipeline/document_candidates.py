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

import numpy as np

from annotator.pipeline.merging import LinkedSpan
from annotator.model.tokenization import Passage

WORD = re.compile(r"\w+(?:[.'&-]\w+)*")
# Words that many titles share: matching them would pull in unrelated entities ("Manchester United" for
# "United States").
GENERIC_TITLE_WORDS = frozenset({"the", "of", "and", "in", "on", "at", "for", "de", "la", "le", "a", "an", "to", "fc",
                                 "national", "team", "football", "cricket", "club", "party", "city", "county",
                                 "university", "united", "new", "st"})
QUALIFIER = re.compile(r" \([^)]*\)$")  # "Peter Such (cricketer)": no mention says "cricketer"


def title_words(title: str) -> frozenset[str]:
    """The lower-cased words of `title` that tie a mention to it: no qualifier, no generic words."""
    return frozenset(w.lower() for w in WORD.findall(QUALIFIER.sub("", title))) - GENERIC_TITLE_WORDS


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
