"""Mention table: the entities each name was linked to in the training documents, as extra candidates.

The retriever reads a passage, not a name, so it misses an entity that a name usually means in the training
domain but that is not the name's most prominent sense ("West Indian" for the West Indies cricket team in sports
news): on AIDA-A dev, 261 of the shipped linker's golds were never among a passage's candidates, and for 86 of them
the training documents had linked the same name to the gold (docs/decisions.md#mention-table). The table adds, for every
capitalised name in a passage, the few entities the training links gave that name most often; the reader reads them
with the retrieved candidates and decides, so a table entry never becomes a link on its own.

Build it from a training corpus with `python -m annotator.cli.mention_table --train T --kb KB --out DIR/mentions.tsv`.
The table holds names and KB titles with counts, no text.
"""
from __future__ import annotations

import bisect
import csv
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from annotator.pipeline.document import Document
from annotator.pipeline.document_candidates import WORD

MAX_NAME_WORDS = 4
# Lower-case words that may sit inside a name ("Bank of England", "Real Madrid de ...").
NAME_CONNECTORS = frozenset({"of", "de", "and", "the", "la", "du", "von", "van", "der", "del"})
HEADER = ("name", "title", "count")
_BREAKS = re.compile(r"[\t\r\n]")  # a TSV field cannot hold them


@dataclass(frozen=True)
class MentionTable:
    """name → (KB title, times the training links gave the name that entity), most frequent first."""

    entities: Mapping[str, tuple[tuple[str, int], ...]]

    def __len__(self) -> int:
        return len(self.entities)

    @classmethod
    def from_links(cls, links: Iterable[tuple[str, str]]) -> MentionTable:
        """The table of (name, KB title) links. Names that do not begin with a capital are left out, as no
        passage name is looked up for them, and so are names across a tab or line break."""
        counts: defaultdict[str, Counter[str]] = defaultdict(Counter)
        for name, title in links:
            if name[:1].isupper() and not _BREAKS.search(name):
                counts[name][title] += 1
        return cls({name: tuple(sorted(titles.items(), key=lambda item: (-item[1], item[0])))
                    for name, titles in sorted(counts.items())})

    @classmethod
    def load(cls, path: str | Path) -> MentionTable:
        """Reads a table written by `save` (TSV with a header)."""
        with open(path, encoding="utf-8", newline="") as f:
            rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE, quotechar=None)
            header = tuple(next(rows, ()))
            if header != HEADER:
                raise ValueError(f"{path}: expected the header {HEADER}, got {header}")
            entities: defaultdict[str, list[tuple[str, int]]] = defaultdict(list)
            for number, row in enumerate(rows, start=2):
                if len(row) != 3 or not row[2].isdigit():
                    raise ValueError(f"{path}, line {number}: expected name, title and count, got {row}")
                entities[row[0]].append((row[1], int(row[2])))
        return cls({name: tuple(titles) for name, titles in entities.items()})

    def save(self, path: str | Path) -> None:
        with open(path, "w", encoding="utf-8", newline="") as f:
            # quotechar None: a name or title with a '"' ("Weird Al" Yankovic) is written as it is
            writer = csv.writer(f, delimiter="\t", quoting=csv.QUOTE_NONE, quotechar=None, lineterminator="\n")
            writer.writerow(HEADER)
            writer.writerows((name, title, count) for name, titles in self.entities.items() for title, count in titles)

    def rows(self, titles: Sequence[str], per_name: int) -> NameCandidates:
        """The table over a KB: each name's `per_name` most frequent entities as KB rows (titles not in the KB
        dropped)."""
        wanted = {title for entries in self.entities.values() for title, _ in entries[:per_name]}
        row_of = {}
        for row, title in enumerate(titles):
            if title in wanted and title not in row_of:
                row_of[title] = row
        by_name = {name: tuple(row_of[t] for t, _ in entries[:per_name] if t in row_of)
                   for name, entries in self.entities.items()}
        return NameCandidates({name: rows for name, rows in by_name.items() if rows}, per_name)


@dataclass(frozen=True)
class NameCandidates:
    """A mention table resolved to KB rows: the extra candidates of the names in a passage."""

    rows_by_name: Mapping[str, tuple[int, ...]]
    per_name: int  # at most this many rows per name

    def added_to(self, candidates: Sequence[Sequence[np.ndarray]],
                 documents: Sequence[Document]) -> list[list[np.ndarray]]:
        """Per document, each passage's `candidates` followed by the rows of its names that were not among them."""
        return [with_name_candidates(rows, self.for_passages(document.text, [p.characters for p in document.passages]))
                for rows, document in zip(candidates, documents)]

    def for_passages(self, text: str, ranges: Sequence[tuple[int, int]]) -> list[list[int]]:
        """For each character range (a passage of `text`), the rows of the names that lie wholly inside it, in
        the order the names occur."""
        words = list(WORD.finditer(text))
        starts = [w.start() for w in words]
        result = []
        for begin, end in ranges:
            inside = [w for w in words[bisect.bisect_left(starts, begin):bisect.bisect_left(starts, end)]
                      if w.end() <= end]
            found: dict[int, None] = {}
            for first in range(len(inside)):
                for name in _names_from(text, inside, first):
                    found.update(dict.fromkeys(self.rows_by_name.get(name, ())))
            result.append(list(found))
        return result


def _names_from(text: str, words: Sequence[re.Match[str]], first: int) -> Iterable[str]:
    """The names of up to `MAX_NAME_WORDS` words starting at `words[first]`: capitalised words, with connectors
    between them."""
    if not words[first].group()[0].isupper():
        return
    for last in range(first, min(first + MAX_NAME_WORDS, len(words))):
        word = words[last].group()
        if not word[0].isupper():
            if word in NAME_CONNECTORS:
                continue
            return
        yield text[words[first].start():words[last].end()]


def with_name_candidates(retrieved: Sequence[np.ndarray], extra: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Each passage's retrieved rows followed by its name candidates that were not retrieved."""
    result = []
    for rows, names in zip(retrieved, extra):
        have = set(rows.tolist())
        added = [row for row in names if row not in have]
        result.append(np.concatenate([rows, np.asarray(added, dtype=rows.dtype)]) if added else rows)
    return result
