"""Spelling variants: an answer written in an older spelling of its title takes the KB entry of the name as titled.

The KB merges sources of several ages, and every benchmark's gold titles were added as written, so some entities are
in it twice under titles that differ only in accents or letter case: a described article and a title-only copy
(*Chişinău* beside *Chișinău*, *Desi Bouterse* beside *Dési Bouterse*, *Intelligent network* beside *Intelligent
Network*), or two title-only copies from datasets of different ages (*Ogun Temizkanoglu*, *Ogün Temizkanoğlu*).
Wikipedia titles a name with its accents, so each such group has one title as written (`titled_as`): the one with
the most accents, and among those the described one (*Luís Oliveira*, title-only, over the described *Luis
Oliveira*); an answer to any other entry of the group moves to it. A group with two described entries is two
articles (*Dance* and the village *Dańce*) and stays as it is, as does one without a single best title.

The reader's choice of entity stands; only its title changes. Found and given spans alike
(docs/decisions.md#spelling-variants).
"""
from __future__ import annotations

import unicodedata
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from annotator.kb.titles import without_accents
from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.stages import Reading


@dataclass(frozen=True, eq=False)
class SpellingVariants:
    """The stage as a post-processor; nothing is read again."""

    variants: dict[int, int]  # a KB row → the row of its name as titled (only rows that move)

    @classmethod
    def from_titles(cls, titles: Sequence[str], described: np.ndarray) -> SpellingVariants:
        # A million titles: the folded names' hashes are counted first, in an array (a list and a Counter of the
        # folded names held 115 MB more at load), then the rows of a shared hash are grouped by their folded names.
        keys = np.fromiter((zlib.crc32(_folded(title).encode("utf-8")) for title in titles), dtype=np.int64,
                           count=len(titles))
        _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        groups: dict[str, list[int]] = {}
        for row in np.flatnonzero(counts[inverse] > 1).tolist():
            groups.setdefault(_folded(titles[row]), []).append(row)
        variants = {}
        for rows in groups.values():
            titled = titled_as(rows, titles, described)
            variants.update((row, titled) for row in rows if titled is not None and row != titled)
        return cls(variants)

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            document.relink(replace(span, entity=self.variants[span.entity]) for span in document.links
                            if span.entity in self.variants and span.is_linked(decoding.threshold))


def titled_as(rows: Sequence[int], titles: Sequence[str], described: np.ndarray) -> int | None:
    """Among `rows`, KB entries whose titles differ in accents and letter case only, the one titled as Wikipedia
    does: the most accents, then a description; None where two are described or no one entry is best."""
    if sum(bool(described[row]) for row in rows) > 1:
        return None
    ranks = {row: (_accents(titles[row]), bool(described[row])) for row in rows}
    best = max(ranks.values())
    titled = [row for row, rank in ranks.items() if rank == best]
    return titled[0] if len(titled) == 1 else None


def _folded(title: str) -> str:
    return without_accents(title).casefold()


def _accents(title: str) -> int:
    return sum(unicodedata.combining(c) > 0 for c in unicodedata.normalize("NFKD", title))
