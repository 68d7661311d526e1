"""Scripted retrieval and reading stages over the tiny KB, so that what a stage after them does is known exactly
(the second stage, short names, the mention table)."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from annotator.model.tokenization import InputBuilder
from annotator.pipeline.document import Document, PassageScores
from annotator.pipeline.linker import Linker
from annotator.pipeline.loading import build_linker
from annotator.pipeline.mention_table import NameCandidates


class _Titles:
    """The tiny KB's titles and their wordpieces."""

    def __init__(self, builder: InputBuilder, titles: Sequence[str]) -> None:
        self.builder = builder
        self.titles = titles

    def ids(self, text: str) -> list[int]:
        return self.builder.tokenizer(text, add_special_tokens=False)["input_ids"]


class ScriptedRetrieval(_Titles):
    """The entities whose whole title's wordpieces occur in the passage, else only "Paris"; then the mention
    table's `names`, if given."""

    def __init__(self, builder: InputBuilder, titles: Sequence[str], names: NameCandidates | None) -> None:
        super().__init__(builder, titles)
        self.names = names

    def candidates(self, documents: Sequence[Document]) -> list[list[np.ndarray]]:
        found = [[self._found(ids) for ids in document.inputs] for document in documents]
        return found if self.names is None else self.names.added_to(found, documents)

    def _found(self, ids: Sequence[int]) -> np.ndarray:
        rows = [row for row, title in enumerate(self.titles) if _find(ids, self.ids(title)) is not None]
        return np.array(rows or [self.titles.index("Paris")], dtype=np.int64)

    def describe(self) -> dict[str, str | int | float]:
        return {"retrieval": "scripted"}


class ScriptedReading(_Titles):
    """For each candidate, the first occurrence of its whole title marked, else of its title's last word, else
    [CLS]; all rerank logits equal. Remembers how many candidates each passage of each call had."""

    def __init__(self, builder: InputBuilder, titles: Sequence[str]) -> None:
        super().__init__(builder, titles)
        self.reads: list[list[int]] = []

    def scores(self, documents: Sequence[Document],
               candidates: Sequence[Sequence[np.ndarray]]) -> list[list[PassageScores]]:
        self.reads.append([len(rows) for document_rows in candidates for rows in document_rows])
        return [[self._scored(ids, len(passage.ids), rows)
                 for ids, passage, rows in zip(document.inputs, document.passages, document_rows)]
                for document, document_rows in zip(documents, candidates)]

    def _scored(self, ids: Sequence[int], n: int, rows: np.ndarray) -> PassageScores:
        start, end = np.full((len(rows), 1 + n), -20.0), np.full((len(rows), 1 + n), -20.0)
        for k, row in enumerate(rows):
            title, last_word = self.ids(self.titles[row]), self.ids(self.titles[row].split()[-1])
            found = _find(ids[: 1 + n], title), _find(ids[: 1 + n], last_word)
            first, length = (found[0], len(title)) if found[0] is not None else (found[1], len(last_word))
            first, last = (0, 0) if first is None else (first, first + length - 1)
            start[k, first], end[k, last] = 20.0, 20.0
        return PassageScores(rows, start, end, np.zeros(len(rows)))

    def describe(self) -> dict[str, str | int | float]:
        return {"device": "scripted"}


def scripted_linker(linker: Linker, *, threshold: float, document_candidates: bool = False,
                    short_names: bool = False, names: NameCandidates | None = None) -> Linker:
    """`linker` (the tiny one, in the paper's setup: of the stages after decoding, web addresses only) with
    scripted retrieval (plus the mention table's `names`, if given) and reading (`.reading.reads`), over the stages
    the loader builds (`build_linker`) for its config with γ = `threshold` and the stages asked for."""
    assert linker.sources is not None, "a linker loaded from a checkpoint"
    models, kb = linker.sources
    config = models.config.replace(threshold=threshold, document_candidates=document_candidates,
                                   short_names=short_names)
    staged = build_linker(dataclasses.replace(models, config=config), kb)
    titles = staged.index.titles
    return dataclasses.replace(staged, retrieval=ScriptedRetrieval(staged.builder, titles, names),
                               reading=ScriptedReading(staged.builder, titles))


def _find(ids: Sequence[int], part: Sequence[int]) -> int | None:
    return next((i for i in range(len(ids) - len(part) + 1) if list(ids[i:i + len(part)]) == list(part)), None)
