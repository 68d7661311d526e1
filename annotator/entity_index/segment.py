"""A KB's changes as an index segment searched beside the index of its file (`annotator.kb.changes`).

`DeltaSegment` holds the changed entities' reader inputs and vectors: only they are encoded, each once (a segment
reuses the rows of the segment it follows). It is cached under the identity of the base index and of the change
set, so that a cache never mixes two versions of a KB. `SegmentedIndex` is the base index and the segment as one
`EntityIndex`: the segment's rows follow the base's; the base's entries removed or updated are masked (never
found, their titles blank). `compact_folder` writes both into a new index folder without encoding anything.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from annotator.data_types import Entity
from annotator.entity_index.build import EntityEncoder
from annotator.entity_index.entity_index import EntityIndex
from annotator.entity_index.entity_inputs import gather_entity_rows, padded_entity_rows
from annotator.entity_index.folder import (MANIFEST, identity_key, read_manifest, save_npy, stored_titles,
                                           stored_vectors, write_json)
from annotator.kb.changes import KBChanges
from annotator.model.encoders import cache_dir
from annotator.model.tokenization import InputBuilder


@dataclass(frozen=True, eq=False)
class DeltaSegment:
    """The changed entities' index rows: titles, QIDs, `[CLS] title [unused2] description [SEP]` ids and vectors."""

    titles: tuple[str, ...]
    qids: tuple[str | None, ...]
    entity_ids: np.ndarray  # (rows, max_entity_len) int32, 0-padded
    lengths: np.ndarray  # (rows,) int32
    embeddings: np.ndarray  # (rows, dim) float16
    keys: tuple[str, ...]  # each row's content (title, text, QID) hashed: what a later segment reuses

    def __len__(self) -> int:
        return len(self.titles)

    @classmethod
    def encode(cls, entities: Sequence[Entity], *, encoder: Callable[[], EntityEncoder], builder: InputBuilder,
               dim: int, previous: DeltaSegment | None = None, batch_size: int = 64) -> DeltaSegment:
        """The segment of `entities` (vectors of size `dim`); the rows of `previous` with the same content are
        copied, the others encoded (`encoder` is made only when there are some)."""
        keys = tuple(_content_key(entity) for entity in entities)
        width = builder.config.max_entity_len
        ids, lengths = (padded_entity_rows(builder, [e.title for e in entities], [e.text for e in entities])
                        if entities else (np.zeros((0, width), np.int32), np.zeros(0, np.int32)))
        reused = {key: row for row, key in enumerate(previous.keys)} if previous is not None else {}
        new = np.array([row for row, key in enumerate(keys) if key not in reused], dtype=np.int64)
        embeddings = np.zeros((len(entities), dim), dtype=np.float16)
        if len(new):
            embeddings[new] = encode_rows(encoder(), builder, ids[new], lengths[new], batch_size)
        for row, key in enumerate(keys):
            if key in reused:
                embeddings[row] = previous.embeddings[reused[key]]  # type: ignore[union-attr]
        return cls(tuple(e.title for e in entities), tuple(e.qid for e in entities), ids, lengths, embeddings, keys)

    def save(self, directory: Path) -> None:
        """Write the segment to `directory` whole or not at all (a folder renamed into place)."""
        partial = directory.with_name(directory.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        for name in ("entity_ids", "lengths", "embeddings"):
            np.save(partial / f"{name}.npy", getattr(self, name))
        write_json(partial / "rows.json", {"titles": self.titles, "qids": self.qids, "keys": self.keys})
        partial.rename(directory)

    @classmethod
    def load(cls, directory: Path) -> DeltaSegment:
        rows = json.loads((directory / "rows.json").read_text(encoding="utf-8"))
        arrays = {name: np.load(directory / f"{name}.npy") for name in ("entity_ids", "lengths", "embeddings")}
        return cls(tuple(rows["titles"]), tuple(rows["qids"]), keys=tuple(rows["keys"]), **arrays)


def segment_dir(base_identity: Mapping[str, Any], changes: KBChanges) -> Path:
    """The cache folder of the segment of `changes` over the index built with `base_identity`."""
    return cache_dir() / "segments" / identity_key({"base": dict(base_identity), "changes": changes.digest})


def cached_segment(base_identity: Mapping[str, Any], changes: KBChanges, *, encoder: Callable[[], EntityEncoder],
                   builder: InputBuilder, dim: int, previous: KBChanges | None = None,
                   batch_size: int = 64) -> DeltaSegment:
    """The segment of `changes` from the cache, else encoded (reusing the rows of `previous`'s segment when it is
    cached) and cached."""
    directory = segment_dir(base_identity, changes)
    if (directory / "rows.json").is_file():
        return DeltaSegment.load(directory)
    before = segment_dir(base_identity, previous) if previous else None
    segment = DeltaSegment.encode(changes.entities, encoder=encoder, builder=builder, dim=dim, batch_size=batch_size,
                                  previous=DeltaSegment.load(before) if before and before.is_dir() else None)
    segment.save(directory)
    return segment


def encode_rows(encoder: EntityEncoder, builder: InputBuilder, ids: np.ndarray, lengths: np.ndarray,
                batch_size: int) -> np.ndarray:
    """Entity-tower vectors (rows, dim) float16 of stored id rows, batches of similar length."""
    vectors = np.zeros((len(lengths), encoder.dim), dtype=np.float16)
    order = np.argsort(lengths, kind="stable")
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            rows = np.sort(order[start:start + batch_size])
            batch = builder.padded_batch(ids[rows], lengths[rows])
            vectors[rows] = encoder.embed_entities(batch.to(encoder.device)).float().cpu().numpy()
    return vectors


class SegmentedIndex(EntityIndex):
    """An index and the segment of its KB's changes, searched as one: rows past the base's are the segment's."""

    def __init__(self, base: EntityIndex, segment: DeltaSegment, changes: KBChanges) -> None:
        masked = [row for row, title in enumerate(base.titles) if title in changes.hidden]
        titles, qids = list(base.titles), list(base.qids)
        for row in masked:  # a blank title matches no text, so the name stages never pick a masked row
            titles[row], qids[row] = "", None
        super().__init__(base.directory, {**base.manifest, "changes": changes.digest}, titles + list(segment.titles),
                         qids + list(segment.qids), base.entity_ids, base.lengths, base.embeddings, base.index,
                         base.index_type)
        self.base, self.segment = base, segment
        self.masked = np.array(masked, dtype=np.int64)
        self._segment_vectors = segment.embeddings.astype(np.float32).T  # once, not per search

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """`EntityIndex.search` over the base's unmasked rows and the segment's."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        k = min(k, len(self) - len(self.masked))
        # masked rows are dropped from a longer list, which keeps every backend's search as it is
        scores, rows = self.base.search(queries, k + len(self.masked))
        if len(self.masked):
            hidden = np.isin(rows, self.masked)
            scores[hidden], rows[hidden] = -np.inf, -1
        segment_scores = queries @ self._segment_vectors
        segment_rows = np.broadcast_to(np.arange(len(self.segment)) + len(self.base), segment_scores.shape)
        scores, rows = np.concatenate([scores, segment_scores], 1), np.concatenate([rows, segment_rows], 1)
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return np.take_along_axis(scores, order, 1), np.take_along_axis(rows, order, 1)

    def entity_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`EntityIndex.entity_rows` over base and segment rows alike."""
        rows = np.asarray(rows, dtype=np.int64)
        in_base = rows < len(self.base)
        if in_base.all():
            return self.base.entity_rows(rows)
        parts = [(in_base, *self.base.entity_rows(rows[in_base])),
                 (~in_base, *gather_entity_rows(self.segment.entity_ids, self.segment.lengths,
                                                rows[~in_base] - len(self.base)))]
        ids = np.zeros((len(rows), max(part[1].shape[1] for part in parts)), dtype=np.int32)
        lengths = np.zeros(len(rows), dtype=np.int64)
        for where, part_ids, part_lengths in parts:
            ids[where, : part_ids.shape[1]] = part_ids
            lengths[where] = part_lengths
        return ids, lengths


def compact_folder(directory: Path, *, base_dir: Path, segment: DeltaSegment, changes: KBChanges,
                   identity: Mapping[str, Any]) -> None:
    """Write an index folder (complete, exact search) of the base folder's rows not hidden by `changes`, then the
    segment's rows: the index of the KB file `compact` writes, with the vectors already encoded."""
    manifest = read_manifest(base_dir)
    titles, qids = stored_titles(base_dir)
    kept = np.array([row for row, title in enumerate(titles) if title not in changes.hidden], dtype=np.int64)
    partial = directory.with_name(directory.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    (partial / "titles.txt").write_text("".join(f"{titles[row]}\n" for row in kept)
                                        + "".join(f"{title}\n" for title in segment.titles), encoding="utf-8")
    (partial / "qids.txt").write_text("".join(f"{qids[row] or ''}\n" for row in kept)
                                      + "".join(f"{qid or ''}\n" for qid in segment.qids), encoding="utf-8")
    base_ids = np.load(base_dir / "entity_ids.npy", mmap_mode="r")
    save_npy(partial / "entity_ids.npy", np.concatenate([base_ids[kept], segment.entity_ids]))
    save_npy(partial / "entity_lengths.npy",
             np.concatenate([np.load(base_dir / "entity_lengths.npy")[kept], segment.lengths]).astype(np.int32))
    vectors = stored_vectors(base_dir)
    save_npy(partial / "embeddings.npy", np.concatenate([np.asarray(vectors[kept], dtype=np.float16),
                                                         segment.embeddings]))
    write_json(partial / MANIFEST, {"identity": dict(identity), "complete": True, "rows": len(kept) + len(segment),
                                    "dim": int(vectors.shape[1]), "encoded_with": manifest.get("encoded_with"),
                                    "compacted_from": manifest.get("identity")})
    shutil.rmtree(directory, ignore_errors=True)
    partial.rename(directory)


def _content_key(entity: Entity) -> str:
    return hashlib.sha256(json.dumps([entity.title, entity.text, entity.qid]).encode()).hexdigest()[:16]
