"""Retrieval: every passage embedded by the passage tower, its top-K entities searched in the entity index, then the
mention table's entities for the names it holds and the title matches of the spans given in it added."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from annotator.entity_index import EntityIndex
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import InputBuilder, per_document
from annotator.pipeline.document import Document
from annotator.pipeline.mention_table import NameCandidates
from annotator.pipeline.title_matches import TitleMatches
from annotator.runtime.cancellation import check_cancelled


@dataclass(frozen=True, eq=False, kw_only=True)
class CandidateRetrieval:
    """The candidates of every passage of a set of documents: the passages embedded in batches of `batch_size`,
    one index search for all of them, then the mention table's entities (`names`, if on) and the given spans' title
    matches (`titles`, if on) after the retrieved."""

    builder: InputBuilder
    retriever: DualEncoder  # its passage tower
    index: EntityIndex
    device: torch.device
    top_k: int
    batch_size: int
    names: NameCandidates | None = None
    titles: TitleMatches | None = None

    def candidates(self, documents: Sequence[Document]) -> list[list[np.ndarray]]:
        """Per document, per passage, the KB rows of its top-K entities, nearest first, then its name candidates and
        title matches."""
        inputs = [ids for document in documents for ids in document.inputs]
        vectors = []
        with torch.inference_mode():
            for first in range(0, len(inputs), self.batch_size):
                check_cancelled()
                batch = self.builder.pad(inputs[first:first + self.batch_size])
                passages = batch.input_ids.shape[0]
                if self.device.type == "cuda":  # few shapes, each paying its first use once (Batch.padded_to_buckets)
                    batch = batch.padded_to_buckets(self.builder.pad_id)
                vectors.append(self.retriever.embed_passages(batch.to(self.device))[:passages].float())
        _, rows = self.index.search(torch.cat(vectors).cpu().numpy(), self.top_k)
        retrieved = per_document((r[r >= 0] for r in rows), documents)
        if self.names is not None:
            retrieved = self.names.added_to(retrieved, documents)
        return retrieved if self.titles is None else self.titles.added_to(retrieved, documents)

    def describe(self) -> dict[str, str | int | float]:
        names = ("off" if self.names is None else
                 f"{len(self.names.rows_by_name)} names, up to {self.names.per_name} entities each")
        titles = "off" if self.titles is None else f"up to {self.titles.per_span} per given span"
        return {"entities": len(self.index), "index": self.index.index_type, "mention_table": names,
                "title_matches": titles}
