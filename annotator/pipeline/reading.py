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
from annotator.runtime.cancellation import check_cancelled
from annotator.runtime.onnx_int8 import OnnxInt8Reader


class EntityInputs(Protocol):
    """The reader's inputs of KB rows (`EntityIndex`; `TitleOnlyEntities` cuts off the descriptions)."""

    def entity_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows, longest) right-padded ids and their lengths."""
        ...


@dataclass(frozen=True, eq=False, kw_only=True)
class BatchedReading:
    """The reader's scores of every (passage, candidate) pair, `batch_size` pairs of similar length per forward
    pass. With `batch_size=1` each pair is read alone, with no padding (the original EntQA's cost model)."""

    builder: InputBuilder
    reader: Reader | OnnxInt8Reader
    index: EntityInputs  # the candidates' entity inputs: the index's stored ones, or a view of them
    device: torch.device
    batch_size: int

    def scores(self, documents: Sequence[Document],
               candidates: Sequence[Sequence[np.ndarray]]) -> list[list[PassageScores]]:
        """Per document, per passage, its scores against its candidates, in one set of batches for all documents.

        Only [CLS] and passage positions are kept: the topic is context, never a mention.
        """
        inputs = [ids for document in documents for ids in document.inputs]
        widths = [1 + len(passage.ids) for document in documents for passage in document.passages]
        rows = [passage_rows for document_rows in candidates for passage_rows in document_rows]
        counts = [len(passage_rows) for passage_rows in rows]
        batch = self.builder.reader_batch(inputs, np.repeat(np.arange(len(rows)), counts),
                                          *self.index.entity_rows(np.concatenate(rows)))
        start, end, rerank = self._score_pairs(batch, max(widths))
        ends = np.cumsum(counts)  # each passage's pairs are consecutive rows of the batch
        return per_document((PassageScores(r, start[e - n:e, :w], end[e - n:e, :w], rerank[e - n:e])
                             for r, n, e, w in zip(rows, counts, ends, widths)), documents)

    def describe(self) -> dict[str, str | int | float]:
        return {"device": f"{self.device} {self.reader.precision}"}

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
