"""Second-stage candidates: entities the document already linked, for the words the first pass left unlinked.

Retrieval sees one 32-wordpiece passage, so a later "Bailey" or "WASHINGTON" often retrieves no Donovan Bailey
or MaliVai Washington even after the document has linked the full name (on AIDA-A dev, 149 of the 547 gold
mentions never among their passages' candidates are such references; docs/RESULTS.md §19). The reader then
scores the passage against those entities too, and only spans that overlap no first-pass mention are added.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from annotator.merging import LinkedSpan
from annotator.tokenization import Passage

WORD = re.compile(r"\w+(?:[.'&-]\w+)*")
# Words that many titles share, so that matching them would pull in unrelated entities ("Manchester United"
# for "United States"), and a title's parenthesised qualifier ("Peter Such (cricketer)").
GENERIC_TITLE_WORDS = frozenset({"the", "of", "and", "in", "on", "at", "for", "de", "la", "le", "a", "an", "to", "fc",
                                 "national", "team", "football", "cricket", "club", "party", "city", "county",
                                 "university", "united", "new", "st"})
QUALIFIER = re.compile(r" \([^)]*\)$")


def title_words(title: str) -> frozenset[str]:
    """The lower-cased words of `title` that tie a mention to it: no qualifier, no generic words."""
    return frozenset(w.lower() for w in WORD.findall(QUALIFIER.sub("", title))) - GENERIC_TITLE_WORDS


def document_candidates(text: str, passages: Sequence[Passage], retrieved: Sequence[Iterable[int]],
                        linked: Sequence[LinkedSpan], titles: Sequence[str]) -> list[np.ndarray]:
    """Per passage, the KB rows linked in the document that the passage did not retrieve and whose title shares
    a word with a capitalised word of the passage outside every linked span.

    Args:
        text: the document.
        passages: its passages.
        retrieved: KB rows already among each passage's candidates.
        linked: the first pass's merged mentions of the document.
        titles: KB titles by row.
    """
    words = {span.entity: title_words(titles[span.entity]) for span in linked}
    result = []
    for passage, rows in zip(passages, retrieved):
        begin, end = passage.offsets[0][0], passage.offsets[-1][1]
        unlinked = {m.group().lower() for m in WORD.finditer(text, begin, end) if m.group()[0].isupper()
                    and not any(s.start <= m.start() < s.end for s in linked)}
        have = set(rows)
        result.append(np.array(sorted(r for r, w in words.items() if r not in have and w & unlinked), dtype=np.int64))
    return result
