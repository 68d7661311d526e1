"""`EntityIndex`: an index folder opened for linking (arrays memory-mapped, a search backend over the vectors)."""
from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from annotator.entity_index.build import EntityEncoder, build_folder
from annotator.entity_index.entity_inputs import gather_entity_rows
from annotator.entity_index.folder import read_manifest, stored_titles, stored_vectors
from annotator.entity_index.search import SearchIndex, on_hardware, open_search_index, search_hardware
from annotator.errors import ModelLoadError
from annotator.model.tokenization import InputBuilder

logger = logging.getLogger(__name__)


class EntityIndex:
    """Entity metadata, token ids, vectors and a search index over them; rows are KB line positions."""

    def __init__(self, directory: Path, manifest: Mapping[str, Any], titles: list[str], qids: list[str | None],
                 entity_ids: np.ndarray, lengths: np.ndarray, embeddings: np.ndarray,
                 index: SearchIndex, index_type: str) -> None:
        self.directory = directory
        self.manifest = dict(manifest)
        self.index_type = index_type
        self.titles = titles
        self.qids = qids
        self.entity_ids = entity_ids  # (rows, max_entity_len) int32 memmap
        self.lengths = lengths  # (rows,) int32 memmap
        self.embeddings = embeddings  # (rows, dim) float16 memmap
        self.index = index

    def __len__(self) -> int:
        return len(self.titles)

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    @classmethod
    def build(cls, directory: str | Path, *, kb_path: str | Path, encoder: EntityEncoder, builder: InputBuilder,
              checkpoint_id: str, index_type: str = "flat", batch_size: int = 256,
              limit: int | None = None, use_gpu: bool | None = None) -> EntityIndex:
        """Encode a KB with the entity tower and index it; an interrupted build resumes where it stopped.

        Args:
            directory: the index folder (created). Vectors there with the same identity are reused: a
                finished folder only gains the faiss index of a new `index_type`.
            kb_path: the KB file (any format `read_kb` reads).
            encoder: the retriever (its entity tower, on its device and dtype) or its int8 ONNX Runtime export.
            builder: makes `[CLS] title [unused2] description [SEP]` ids of `max_entity_len` at most.
            checkpoint_id: identity of the entity tower weights (see `weights_identity`).
            index_type: a key of `INDEX_FACTORIES`.
            batch_size: entities per forward pass (batches hold entities of similar length).
            limit: index only the first `limit` entities (benchmarks, samples).
            use_gpu: search on the GPU; None: when torch sees one (see `load`).
        """
        directory = Path(directory)
        identity = build_folder(directory, kb_path=kb_path, encoder=encoder, builder=builder,
                                checkpoint_id=checkpoint_id, index_type=index_type, batch_size=batch_size, limit=limit)
        return cls.load(directory, identity=identity, index_type=index_type, use_gpu=use_gpu)

    @classmethod
    def load(cls, directory: str | Path, *, identity: Mapping[str, Any] | None = None, index_type: str = "flat",
             use_gpu: bool | None = None) -> EntityIndex:
        """Open a finished index folder (arrays memory-mapped, faiss index read once).

        Args:
            directory: a folder written by `build`.
            identity: when given, each of its keys must match the manifest's (see `index_identity`).
            index_type: the search index to open: "flat" (exact, made from the vectors) or one built there.
            use_gpu: search on the GPU (faiss's GPU index; without a faiss GPU build, the exact index only,
                through torch); None: when torch sees one.

        Raises:
            ModelLoadError: the folder is missing, unfinished, built from another KB/checkpoint/config, or
                lacks the faiss index of `index_type`.
        """
        directory = Path(directory)
        manifest = read_manifest(directory)
        if not manifest.get("complete"):
            raise ModelLoadError(f"{directory} holds no finished entity index; build it with "
                                 f"python -m annotator.entity_index --model DIR --kb PATH --out {directory}")
        stale = sorted(k for k in identity or {} if manifest["identity"].get(k) != identity[k])
        if stale:
            raise ModelLoadError(f"the index in {directory} was built for another {', '.join(stale)} "
                                 f"({ {k: manifest['identity'].get(k) for k in stale} }); rebuild it")
        titles, qids = stored_titles(directory)
        entity_ids = np.load(directory / "entity_ids.npy", mmap_mode="r")
        lengths = np.load(directory / "entity_lengths.npy", mmap_mode="r")
        embeddings = stored_vectors(directory)
        hardware = search_hardware(torch.cuda.is_available() if use_gpu is None else use_gpu)
        index = open_search_index(directory, embeddings, index_type, hardware)
        if not len(titles) == len(entity_ids) == len(embeddings) == index.ntotal:
            raise ModelLoadError(f"{directory} is inconsistent: {len(titles)} titles, {len(entity_ids)} id rows, "
                                 f"{len(embeddings)} vectors, {index.ntotal} indexed")
        index = on_hardware(index, hardware)
        logger.info("loaded entity index %s: %d entities, %s", directory, index.ntotal, index_type)
        return cls(directory, manifest, titles, qids, entity_ids, lengths, embeddings, index, index_type)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k entities of highest inner product for each query.

        Args:
            queries: (n, dim) query vectors.
            k: hits per query (at most the number of entities).

        Returns:
            scores (n, k') float32 and rows (n, k') int64, best first, k' = min(k, entities). Approximate
            indexes may find fewer than k' hits; those slots hold row -1 and score -inf.
        """
        k = min(k, self.index.ntotal)
        scores, rows = self.index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        scores[rows < 0] = -np.inf
        return scores, rows

    def entity_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The reader's entity inputs of the given rows: stored ids (rows, longest) right-padded, and lengths."""
        return gather_entity_rows(self.entity_ids, self.lengths, rows)

    def entity_token_ids(self, rows: Iterable[int]) -> list[list[int]]:
        """`entity_rows` as lists."""
        ids, lengths = self.entity_rows(np.fromiter(rows, dtype=np.int64))
        return [row[:n].tolist() for row, n in zip(ids, lengths)]
