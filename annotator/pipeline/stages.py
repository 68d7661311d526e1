"""The seams of the linker: what a retrieval, a reading and a post-processing stage must offer, so that another
(scripted in tests, naive or recording in benchmarks) can be passed to `Linker` in place of the shipped one."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from annotator.pipeline.document import Document, PassageScores
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.text_view import TextView


class TextViewer(Protocol):
    """The text the models read for each original (`annotator.pipeline.text_view.TagReader` is the shipped one)."""

    def view(self, text: str) -> TextView:
        """`text` as the models read it, with the map back to its offsets."""
        ...


class Retrieval(Protocol):
    """Candidate entities for every passage (`annotator.pipeline.candidate_retrieval` is the shipped one)."""

    def candidates(self, documents: Sequence[Document]) -> list[list[np.ndarray]]:
        """Per document, per passage, the KB rows of its candidates, best first."""
        ...

    def describe(self) -> dict[str, str | int | float]:
        """The entity index and mention table in use (for `Linker.describe`)."""
        ...


class Reading(Protocol):
    """The reader's scores of (passage, candidate) pairs (`annotator.pipeline.reading` is the shipped one)."""

    def scores(self, documents: Sequence[Document],
               candidates: Sequence[Sequence[np.ndarray]]) -> list[list[PassageScores]]:
        """Per document, per passage, the scores of the passage against its `candidates` (rows, in that order)."""
        ...

    def describe(self) -> dict[str, str | int | float]:
        """The device and precision the reader runs in (for `Linker.describe`)."""
        ...


class PostProcessor(Protocol):
    """A second stage that revises the links decoding gave (document candidates, short names)."""

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        """Revise each document's `links` (and `scores`, where it reads again) in place, reading and decoding
        again, where it does, with the linker's own stages."""
        ...
