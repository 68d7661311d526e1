"""The name test: which (passage, candidate) pairs the reader need not read, because the passage cannot mention the
candidate at all.

The reader reads every passage against every candidate (16 retrieved, plus the mention table's and the title
matches), passages overlapping by half, and for almost every pair it finds no mention. A pair is read only when the
passage holds a word of the candidate's title (`title_words`: no qualifier, no generic words) or a name that the
name priors (`annotator.knowledge`: training links and the KB's descriptions) give the candidate, or the candidate is
among the retriever's first `keep_top`. A pair not read keeps the candidate in the passage's scores with no span
(its start and end logits mark only [CLS]) and a stand-in rerank logit, so that the softmax over the passage's
candidates keeps about the denominator it had: `stand_in` is the log-mean-exp of the rerank logits of AIDA train's
pairs that fail the test (`python -m bench.name_test_fit`), docs/results/cpu-speed-2026-12-07.md.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from annotator.knowledge.names import name_hashes
from annotator.knowledge.tables import NamePriors
from annotator.pipeline.document import Document
from annotator.pipeline.document_candidates import GENERIC_TITLE_WORDS
from annotator.kb.titles import without_accents, without_qualifier

MAX_NAME_WORDS = 4  # the longest name looked up in the priors, in words
# Runs of letters and digits: "Germany's" holds "germany", "Toronto-Dominion" "toronto" and "dominion".
WORD = re.compile(r"\w+")


def _folded(word: str) -> str:
    return without_accents(word).lower()


@dataclass(frozen=True, eq=False)
class NameTest:
    """Which pairs of a document's passages and candidates may be a mention (see the module)."""

    titles: Sequence[str]  # KB titles by row
    priors: NamePriors | None  # name → rows; None: titles only
    keep_top: int  # the first candidates of each passage (the retriever's nearest) are always read
    stand_in: float  # the rerank logit of a pair not read
    _words: dict[int, frozenset[str]] = field(default_factory=dict)  # row → its folded title words, as met

    def readable(self, document: Document, candidates: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Per passage, (K,) bool: whether each candidate's pair is read."""
        text = document.text
        words = list(WORD.finditer(text))
        folded = [_folded(w.group()) for w in words]
        named = self._named(text, words, candidates)
        result = []
        for passage, rows in zip(document.passages, candidates):
            begin, end = passage.characters
            inside = {folded[i] for i, w in enumerate(words) if begin <= w.start() and w.end() <= end}
            names = {row for (first, last), found in named.items() if begin <= words[first].start()
                     and words[last].end() <= end for row in found}
            keep = np.zeros(len(rows), dtype=bool)
            keep[:self.keep_top] = True
            for j, row in enumerate(rows.tolist()):
                if not keep[j]:
                    keep[j] = row in names or not self._title_words(row).isdisjoint(inside)
            result.append(keep)
        return result

    def _title_words(self, row: int) -> frozenset[str]:
        words = self._words.get(row)
        if words is None:
            words = self._words[row] = frozenset(
                folded for folded in map(_folded, WORD.findall(without_qualifier(self.titles[row])))
                if len(folded) > 1 and folded not in GENERIC_TITLE_WORDS)
        return words

    def _named(self, text: str, words: Sequence, candidates: Sequence[np.ndarray]) -> dict[tuple[int, int], set[int]]:
        """(first word, last word) → the document's candidates that the priors give that name."""
        if self.priors is None or not words or not any(len(rows) for rows in candidates):
            return {}
        spans = [(first, last) for first in range(len(words))
                 for last in range(first, min(first + MAX_NAME_WORDS, len(words)))]
        # a name ends where its last word does, or after a full stop there ("U.S.")
        dotted = [(first, last) for first, last in spans if text[words[last].end():words[last].end() + 1] == "."]
        names = [text[words[first].start():words[last].end()] for first, last in spans] + \
            [text[words[first].start():words[last].end() + 1] for first, last in dotted]
        spans = spans + dotted
        keys = name_hashes(names)
        priors = self.priors
        found = np.searchsorted(priors.keys, keys)
        found = np.minimum(found, len(priors.keys) - 1)
        known = np.flatnonzero(priors.keys[found] == keys)
        wanted = np.unique(np.concatenate([rows for rows in candidates]))
        named: dict[tuple[int, int], set[int]] = {}
        for i in known.tolist():
            k = found[i]
            rows = priors.rows[priors.indptr[k]:priors.indptr[k + 1]]
            hit = rows[np.isin(rows, wanted)]
            if len(hit):
                named.setdefault(spans[i], set()).update(hit.tolist())
        return named
