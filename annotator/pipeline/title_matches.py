"""Title matches: for each span given to disambiguate (D2KB), the KB entries whose title is the span's text, added to
the candidates of the passages that read it.

The retriever reads a passage, not a span, so it misses an entity that the passage does not make prominent: a common
noun given as a mention (*car*, *gossip* in a New York Times sentence), a tweet's lower-case name. The span says
which entry to look up; the reader then decides between these entries and the retrieved ones as for any candidate,
so a match never becomes an answer on its own (docs/decisions.md#title-matches). End to end (A2KB) there is no
given span and nothing is added.

A title matches when it equals the text ignoring case, or when it does without its trailing qualifier (*Taurus
(astrology)* for "Taurus"). The exact title comes first, then described entries, then shorter titles.
"""
from __future__ import annotations

import zlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from annotator.kb.titles import without_qualifier
from annotator.pipeline.document import Document
from annotator.pipeline.mention_table import with_name_candidates


def match_forms(title: str) -> set[str]:
    """The case-folded texts that a title matches: itself, and itself without a trailing parenthesised qualifier."""
    return {title.casefold(), without_qualifier(title).casefold()}


def _key(form: str) -> int:
    # A hash that is the same in every process (str's hash is salted per process), so the table may be pickled.
    return zlib.crc32(form.encode("utf-8"))


@dataclass(frozen=True, eq=False)
class TitleMatches:
    """The KB's titles by the texts they match, as sorted hashes rather than a million-key dict (16 bytes a form;
    a hash may be shared, so each hit is checked against its title)."""

    titles: Sequence[str]
    described: np.ndarray  # (rows,) bool: whether each entry has a description
    per_span: int  # at most this many entries per given span
    _hashes: np.ndarray  # (forms,) int64, sorted
    _rows: np.ndarray  # (forms,) the KB row of each form

    @classmethod
    def from_titles(cls, titles: Sequence[str], described: np.ndarray, per_span: int) -> TitleMatches:
        # Two flat arrays as the forms are listed, not a list of (hash, row) tuples: those held 160 MB more at a
        # 1M-entity KB's load.
        hashes_made, rows_made = array("q"), array("q")
        for row, title in enumerate(titles):
            for form in match_forms(title):
                hashes_made.append(_key(form))
                rows_made.append(row)
        hashes, rows = np.frombuffer(hashes_made, dtype=np.int64), np.frombuffer(rows_made, dtype=np.int64)
        order = np.argsort(hashes, kind="stable")
        if len(described) != len(titles):  # an index served without its KB: no descriptions known
            described = np.zeros(len(titles), dtype=bool)
        return cls(titles, described, per_span, hashes[order], rows[order])

    def rows(self, text: str) -> list[int]:
        """The rows of the entries whose title matches `text`: its exact title first, then described entries, then
        shorter titles, at most `per_span`."""
        return self._matches(text)[:self.per_span]

    def titled(self, text: str) -> list[int]:
        """The rows of the entries whose whole title is `text` ignoring case (no qualifier dropped), ranked as
        `rows` ranks them, all of them."""
        key = text.casefold()
        return [row for row in self._matches(text) if self.titles[row].casefold() == key]

    def _matches(self, text: str) -> list[int]:
        key = text.casefold()
        first, last = (np.searchsorted(self._hashes, _key(key), side=side) for side in ("left", "right"))
        found = {int(row) for row in self._rows[first:last] if key in match_forms(self.titles[row])}
        return sorted(found, key=lambda row: (self.titles[row] != text, not self.described[row],
                                              len(self.titles[row]), self.titles[row]))

    def added_to(self, candidates: Sequence[Sequence[np.ndarray]],
                 documents: Sequence[Document]) -> list[list[np.ndarray]]:
        """Per document, each passage's `candidates` followed by the matches of the given spans that lie wholly inside
        it and were not among them."""
        result = []
        for rows, document in zip(candidates, documents):
            extra: list[list[int]] = [[] for _ in document.passages]
            for start, end in document.given or ():
                matches = self.rows(document.text[start:end])
                for i, passage in enumerate(document.passages):
                    if passage.characters[0] <= start and end <= passage.characters[1]:
                        extra[i] += matches
            result.append(with_name_candidates(rows, [list(dict.fromkeys(e)) for e in extra]))
        return result
