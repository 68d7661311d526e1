"""The name test: which (passage, candidate) pairs the reader need not read, because the passage cannot mention the
candidate at all.

The reader reads every passage against every candidate (16 retrieved, plus the mention table's and the title
matches), passages overlapping by half, and for almost every pair it finds no mention. A pair is read only when the
passage holds a word of the candidate's title (`title_words`: no qualifier, no generic words; also the title's
letters run together, "wifi" for *Wi-Fi*) or a word that begins with one ("Algarves", "Kuwaiti"), a word in capitals
made of the title's initials ("NYC", "US"), or a name that the name priors (`annotator.knowledge`: training links and
the KB's descriptions) give the candidate. A pair not read keeps the candidate in the passage's scores with no span
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
MIN_STEM = 4  # a title word this long passes in a word it begins ("Algarves", "Kuwaiti"); shorter ones only whole
# Runs of letters and digits: "Germany's" holds "germany", "Toronto-Dominion" "toronto" and "dominion".
WORD = re.compile(r"\w+")


def _folded(word: str) -> str:
    return without_accents(word).lower()


@dataclass(frozen=True, eq=False)
class NameTest:
    """Which pairs of a document's passages and candidates may be a mention (see the module)."""

    titles: Sequence[str]  # KB titles by row
    priors: NamePriors | None  # name → rows; None: titles only
    stand_in: float  # the rerank logit of a pair not read
    _forms: dict[int, tuple[frozenset[str], str]] = field(default_factory=dict)  # row → `_title_forms`, as met

    def readable(self, document: Document, candidates: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Per passage, (K,) bool: whether each candidate's pair is read."""
        text = document.text
        words = list(WORD.finditer(text))
        folded = [_folded(w.group()) for w in words]
        named = self._named(text, words, candidates)
        result = []
        for passage, rows in zip(document.passages, candidates):
            begin, end = passage.characters
            held = [i for i, w in enumerate(words) if begin <= w.start() and w.end() <= end]
            inside = {folded[i] for i in held}
            # every word's beginnings of MIN_STEM letters or more: a title word among them begins a word here
            inside |= {folded[i][:n] for i in held for n in range(MIN_STEM, len(folded[i]))}
            capitals = {folded[i] for i in held if len(folded[i]) > 1 and words[i].group().isupper()}
            names = {row for (first, last), found in named.items() if begin <= words[first].start()
                     and words[last].end() <= end for row in found}
            keep = []
            for row in rows.tolist():
                title_words, initials = self._title_forms(row)
                keep.append(row in names or not title_words.isdisjoint(inside) or initials in capitals)
            result.append(np.array(keep, dtype=bool))
        return result

    def _title_forms(self, row: int) -> tuple[frozenset[str], str]:
        """The row's folded title words (no qualifier, no generic word; the words run together too) and its
        initials ("" for a one-word title)."""
        forms = self._forms.get(row)
        if forms is None:
            every = [_folded(word) for word in WORD.findall(without_qualifier(self.titles[row]))]
            kept = {word for word in every if len(word) > 1 and word not in GENERIC_TITLE_WORDS}
            if len(every) > 1:
                kept.add("".join(every))
            forms = self._forms[row] = (frozenset(word for word in kept if len(word) >= MIN_STEM or word in every),
                                        "".join(word[0] for word in every) if len(every) > 1 else "")
        return forms

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
