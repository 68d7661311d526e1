"""Reading: the reader over every (passage, candidate) pair of a set of documents, in batches of similar length."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from annotator.model.reader import Reader
from annotator.model.tokenization import Batch, InputBuilder, per_document
from annotator.pipeline.document import Document, PassageScores
from annotator.pipeline.name_test import NameTest
from annotator.runtime.cancellation import check_cancelled
from annotator.runtime.onnx_int8 import OnnxInt8Reader


class EntityInputs(Protocol):
    """The reader's inputs of KB rows (`EntityIndex`; `TitleOnlyEntities` cuts off the descriptions)."""

    def entity_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows, longest) right-padded ids and their lengths."""
        ...


@dataclass(frozen=True, eq=False)
class CutEntities:
    """An index's stored entity inputs cut to `length` wordpieces for the reader, [SEP] last."""

    index: EntityInputs
    length: int
    sep_id: int

    def entity_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ids, lengths = self.index.entity_rows(rows)
        cut = np.minimum(lengths, self.length)
        ids = ids[:, :self.length].copy()
        longer = np.flatnonzero(lengths > self.length)
        if len(longer):  # (numpy checks the column even for no rows)
            ids[longer, self.length - 1] = self.sep_id
        return ids, cut


@dataclass(frozen=True, eq=False, kw_only=True)
class BatchedReading:
    """The reader's scores of every (passage, candidate) pair, `batch_size` pairs of similar length per forward
    pass. With `batch_size=1` each pair is read alone, with no padding (the original EntQA's cost model)."""

    builder: InputBuilder
    reader: Reader | OnnxInt8Reader
    index: EntityInputs  # the candidates' entity inputs: the index's stored ones, or a view of them
    device: torch.device
    batch_size: int
    name_test: NameTest | None = None  # pairs it rules out are not read (`annotator.pipeline.name_test`)

    def scores(self, documents: Sequence[Document],
               candidates: Sequence[Sequence[np.ndarray]]) -> list[list[PassageScores]]:
        """Per document, per passage, its scores against its candidates, in one set of batches for all documents.

        Only [CLS] and passage positions are kept: the topic is context, never a mention.
        """
        if self.name_test is not None:
            return self._tested_scores(documents, candidates)
        return self._read(documents, candidates)

    def _read(self, documents: Sequence[Document],
              candidates: Sequence[Sequence[np.ndarray]]) -> list[list[PassageScores]]:
        inputs = [ids for document in documents for ids in document.inputs]
        widths = [1 + len(passage.ids) for document in documents for passage in document.passages]
        rows = [passage_rows for document_rows in candidates for passage_rows in document_rows]
        counts = [len(passage_rows) for passage_rows in rows]
        if not sum(counts):  # the name test ruled out every pair
            return per_document((PassageScores(r, np.zeros((0, w)), np.zeros((0, w)), np.zeros(0))
                                 for r, w in zip(rows, widths)), documents)
        batch = self.builder.reader_batch(inputs, np.repeat(np.arange(len(rows)), counts),
                                          *self.index.entity_rows(np.concatenate(rows)))
        start, end, rerank = self._score_pairs(batch, max(widths))
        ends = np.cumsum(counts)  # each passage's pairs are consecutive rows of the batch
        return per_document((PassageScores(r, start[e - n:e, :w], end[e - n:e, :w], rerank[e - n:e])
                             for r, n, e, w in zip(rows, counts, ends, widths)), documents)

    def describe(self) -> dict[str, str | int | float]:
        return {"device": f"{self.device} {self.reader.precision}"}

    def _tested_scores(self, documents: Sequence[Document],
                       candidates: Sequence[Sequence[np.ndarray]]) -> list[list[PassageScores]]:
        """`scores` with the name test: the pairs it passes read, the others given no span and the stand-in rerank
        logit, each passage's candidates in their given order."""
        assert self.name_test is not None
        keeps = [self.name_test.readable(document, rows) for document, rows in zip(documents, candidates)]
        read = self._read(documents, [[rows[keep] for rows, keep in zip(document_rows, document_keeps)]
                                      for document_rows, document_keeps in zip(candidates, keeps)])
        stand_in = self.name_test.stand_in
        result = []
        for document_rows, document_keeps, document_read in zip(candidates, keeps, read):
            passages = []
            for rows, keep, scores in zip(document_rows, document_keeps, document_read):
                if keep.all():
                    passages.append(scores)
                    continue
                width = scores.start.shape[1]
                start = np.full((len(rows), width), -np.inf)
                start[:, 0] = 0.0  # [CLS] only: no span
                end = start.copy()
                rerank = np.full(len(rows), stand_in)
                start[keep], end[keep], rerank[keep] = scores.start, scores.end, scores.rerank
                passages.append(PassageScores(rows, start, end, rerank))
            result.append(passages)
        return result

    def _score_pairs(self, batch: Batch, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start (pairs, width), end (pairs, width) and rerank (pairs,) logits, in the order of the batch's rows;
        positions beyond a pair's own length are -inf."""
        pairs = batch.input_ids.shape[0]
        start, end = np.full((pairs, width), -np.inf), np.full((pairs, width), -np.inf)
        rerank = np.empty(pairs)
        # Similar lengths share a forward pass, so that little compute goes to padding.
        order = np.argsort(batch.attention_mask.sum(1).numpy(), kind="stable")
        chunks = [order[first:first + self.batch_size] for first in range(0, pairs, self.batch_size)]
        # All cut before the first pass: torch's threads (cutting) and ONNX Runtime's (reading) would
        # otherwise wake each other between passes (docs/decisions.md#no-thread-spinning).
        parts = [batch.rows(chunk) for chunk in chunks]
        for chosen, part in zip(chunks, parts):
            check_cancelled()  # a document nobody waits for any more stops here (annotator.runtime.cancellation)
            if self.device.type == "cuda":  # few shapes, each paying its first use once (Batch.padded_to_buckets)
                part = part.padded_to_buckets(self.builder.pad_id)
            with torch.inference_mode():
                logits = self.reader(part.to(self.device))
            # the bucket's rows dropped; its columns lie beyond `width` (every pair is longer than its passage)
            part_start, part_end = (x[:len(chosen), :width].float().cpu().numpy() for x in (logits.start, logits.end))
            columns = part_start.shape[1]
            start[chosen, :columns], end[chosen, :columns] = part_start, part_end
            rerank[chosen] = logits.rerank[:len(chosen)].float().cpu().numpy()
        return start, end, rerank
