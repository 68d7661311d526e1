"""Short entity descriptions, read from the KB once, for answers that show what an entity is (the JSON API)."""
from __future__ import annotations

import logging
from array import array
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from annotator.kb.reading import read_kb

logger = logging.getLogger(__name__)

# Enough for a tooltip's first sentence or two; keeps a 1M-entity KB's descriptions near 150 MB.
DESCRIPTION_CHARS = 240


class EntityDescriptions:
    """The first `DESCRIPTION_CHARS` characters of each KB entity's description, by index row (KB order).

    Stored as one UTF-8 buffer and its offsets rather than a million Python strings.
    """

    def __init__(self, buffer: bytes | bytearray, offsets: np.ndarray) -> None:
        self._buffer = buffer
        self._offsets = offsets  # (rows + 1,) int64: row i is buffer[offsets[i]:offsets[i + 1]]

    @classmethod
    def from_kb(cls, path: str | Path) -> EntityDescriptions:
        """Reads every entity of the KB at `path` (any format `read_kb` reads), in its order."""
        logger.info("reading entity descriptions from %s", path)
        return cls.from_texts(entity.text for entity in read_kb(path))

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> EntityDescriptions:
        """The descriptions `texts`, by row, each shortened to `DESCRIPTION_CHARS`."""
        # One growing buffer and an array of ends, not a list of a million bytes objects joined at the end: the
        # list and the join held three times the buffer at once (300 MB more at a 1M-entity KB's load).
        buffer, ends = bytearray(), array("q", [0])
        for text in texts:
            buffer += _shortened(text).encode("utf-8")
            ends.append(len(buffer))
        return cls(buffer, np.frombuffer(ends, dtype=np.int64).copy())  # bytes(buffer) would copy it once more

    @classmethod
    def none(cls) -> EntityDescriptions:
        """No descriptions (an index served without its KB file): every row reads as ""."""
        return cls(b"", np.zeros(1, dtype=np.int64))

    def appended(self, texts: Iterable[str]) -> EntityDescriptions:
        """These descriptions followed by `texts` as new rows (a KB's changed entities after its file's)."""
        more = EntityDescriptions.from_texts(texts)
        return EntityDescriptions(self._buffer + more._buffer,
                                  np.concatenate([self._offsets, self._offsets[-1] + more._offsets[1:]]))

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def described(self) -> np.ndarray:
        """(rows,) bool: whether each entity has a description (False for all with `none`)."""
        return np.diff(self._offsets) > 0

    def __getitem__(self, row: int) -> str:
        if not 0 <= row < len(self):
            return ""
        return self._buffer[self._offsets[row]:self._offsets[row + 1]].decode("utf-8")


def _shortened(text: str) -> str:
    if len(text) <= DESCRIPTION_CHARS:
        return text
    cut = text[:DESCRIPTION_CHARS - 1]
    return cut[:cut.rfind(" ")].rstrip(" ,;:") + "…" if " " in cut else cut + "…"
