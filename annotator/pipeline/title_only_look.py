"""A last look, title-only, at the candidates the reader ranked as right but found no mention of.

The reader learned on AIDA train to check a candidate's description against the passage, and a description is
today's lead paragraph: "Messi joined Paris Saint-Germain after leaving Barcelona." retrieves *Lionel Messi*
first and the rerank head agrees, but his description ("plays for ... Inter Miami") makes the span head answer
`[CLS]`; read with his title alone, the span is found (docs/decisions.md#title-only-look). So each candidate
that the rerank head scores positive and that no link of its document names yet is read again with its
description left blank, and the mentions found outside every link so far are added; given spans (D2KB) answered
NIL take their answer from the new reading.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.reading import EntityInputs
from annotator.pipeline.stages import Reading


@dataclass(frozen=True, eq=False)
class TitleOnlyEntities:
    """An entity index's stored reader inputs with the description emptied: `[CLS] title [marker] [SEP]` (what
    `BatchedReading` reads, in place of the index). The marker stays, so the reader still sees a described entity
    whose description is blank rather than a KB title-only entry (`[CLS] title [SEP]`), which the training's
    title-only dropout taught it to accept more readily (docs/decisions.md#title-only-look)."""

    index: EntityInputs
    title_marker_id: int  # the id between a title and its description
    sep_id: int

    def entity_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows' inputs cut after the title's marker, (rows, longest) 0-padded, and their lengths; a title-only
        entry is kept as it is."""
        ids, lengths = self.index.entity_rows(rows)
        is_marker = ids == self.title_marker_id
        # ids kept before the new [SEP]: through the marker, or all but a title-only entry's own [SEP]
        kept = np.where(is_marker.any(axis=1), is_marker.argmax(axis=1) + 1, lengths - 1)
        out = np.where(np.arange(ids.shape[1]) < kept[:, None], ids, 0)
        out[np.arange(len(kept)), kept] = self.sep_id
        return out[:, : kept.max(initial=-1) + 1], kept + 1


@dataclass(frozen=True, eq=False)
class TitleOnlyLook:
    """The look as a post-processor: the rejected candidates of every passage read title-only by `reading` (a
    `BatchedReading` over `TitleOnlyEntities`), in one set of reader batches for all documents, and each document
    decoded again."""

    reading: Reading  # reads entities title-only

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        """End to end, the mentions found outside the links so far are added; a given span (D2KB) answered NIL
        takes its best entity over all the readings."""
        rejected = [rejected_candidates(document, decoding.threshold) for document in documents]
        if not any(len(rows) for document_rows in rejected for rows in document_rows):
            return
        for document, extra in zip(documents, self.reading.scores(documents, rejected)):
            if not any(len(s.rows) for s in extra):
                continue
            first = document.links
            document.scores = [s.extended(e.read_title_only()) for s, e in zip(document.scores, extra)]
            found = decoding.links(document)
            if document.given is None:
                document.add_links(found)
            else:
                document.links = [new if not old.is_linked(decoding.threshold) else old
                                  for old, new in zip(first, found)]


def rejected_candidates(document: Document, threshold: float) -> list[np.ndarray]:
    """Per passage, the candidates whose rerank logit is positive and that no link of the document names."""
    linked = {span.entity for span in document.links if span.is_linked(threshold)}
    return [np.array(sorted({int(row) for row, logit in zip(scores.rows, scores.rerank)
                             if logit > 0 and int(row) not in linked}), dtype=np.int64)
            for scores in document.scores]
