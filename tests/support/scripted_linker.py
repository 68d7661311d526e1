"""A linker whose retriever and reader are scripted over the tiny KB, so that what a stage after them does is
known exactly (the second stage, short names)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from annotator.pipeline.linker import Linker, PassageScores


class ScriptedLinker(Linker):
    """The tiny linker with scripted modules, so that what the stages after the reader add is known exactly.

    Retrieval returns the entities whose whole title's wordpieces occur in the passage, else only "Paris"; the
    reader marks, for each candidate, the first occurrence of its whole title, else of its title's last word,
    else [CLS].
    """

    reads: list[list[int]]

    def _title_ids(self, row: int) -> list[int]:
        return self.builder.tokenizer(self.index.titles[row], add_special_tokens=False)["input_ids"]

    def _retrieve(self, inputs: Sequence[Sequence[int]]) -> list[np.ndarray]:
        found = [[row for row in range(len(self.index)) if _find(ids, self._title_ids(row)) is not None]
                 for ids in inputs]
        return [np.array(rows or [self.index.titles.index("Paris")], dtype=np.int64) for rows in found]

    def _read(self, inputs: Sequence[Sequence[int]], passage_lengths: Sequence[int],
              candidates: Sequence[np.ndarray]) -> list[PassageScores]:
        self.reads.append([len(rows) for rows in candidates])
        scores = []
        for ids, n, rows in zip(inputs, passage_lengths, candidates):
            start, end = np.full((len(rows), 1 + n), -20.0), np.full((len(rows), 1 + n), -20.0)
            for k, row in enumerate(rows):
                title = self._title_ids(int(row))
                last_word = self.builder.tokenizer(self.index.titles[row].split()[-1],
                                                   add_special_tokens=False)["input_ids"]
                found = _find(ids[: 1 + n], title), _find(ids[: 1 + n], last_word)
                first, length = (found[0], len(title)) if found[0] is not None else (found[1], len(last_word))
                first, last = (0, 0) if first is None else (first, first + length - 1)
                start[k, first], end[k, last] = 20.0, 20.0
            scores.append(PassageScores(rows, start, end, np.zeros(len(rows))))
        return scores


def _find(ids: Sequence[int], part: Sequence[int]) -> int | None:
    return next((i for i in range(len(ids) - len(part) + 1) if list(ids[i:i + len(part)]) == list(part)), None)
