"""An entity index folder: its file layout, manifest and identity (what it was built from).

Layout of an index folder::

    manifest.json       what was indexed (KB fingerprint, checkpoint id, config) and how; `complete` when done
    titles.txt          one title per row (row = position in the KB file); the .npy files are memory-mapped
    qids.txt            one Wikidata id per row ("" when unknown)
    entity_ids.npy      int32 (rows, max_entity_len): `[CLS] title [unused2] description [SEP]`, 0-padded
    entity_lengths.npy  int32 (rows,): ids used per row
    embeddings.npy      float16 (rows, dim): entity-tower vectors
    embeddings-sq8.index  or instead the vectors as faiss 8-bit scalar codes (a shipped index: half the bytes),
                        decoded to float16 at load
    progress.json       rows encoded so far, in length order (only while building)
    faiss-TYPE.index    an approximate search index ("hnsw"), one per type built; an exact index is
                        rebuilt from embeddings.npy at load. The vectors are shared, so a new type never re-encodes.
"""
from __future__ import annotations

import hashlib
import json
import mmap
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import faiss
import numpy as np
import torch

from annotator.kb.reading import kb_fingerprint
from annotator.model.encoders import cache_dir

if TYPE_CHECKING:
    from annotator.model.config import LinkerConfig

MANIFEST = "manifest.json"
PROGRESS = "progress.json"
COMPACT_VECTORS = "embeddings-sq8.index"
_FORMAT_VERSION = 1


def index_identity(*, kb_path: str | Path | None, checkpoint_id: str, config: LinkerConfig,
                   limit: int | None = None) -> dict[str, Any]:
    """What an index folder is built from (stored in its manifest, compared on load).

    The config part holds what changes the stored ids or vectors; an index built under other values is stale.
    Without `kb_path` the KB keys are left out, so that a comparison checks the model side only.
    """
    # "pooling" is the retriever's one way (mean over tokens), kept so that the identities, and with them the
    # cache folders' names and the shipped index's manifest, stay those of the indexes already built.
    identity = {"format": _FORMAT_VERSION, "checkpoint": checkpoint_id,
                "config": {"encoder": config.encoder, "max_entity_len": config.max_entity_len, "pooling": "mean",
                           "normalize": config.normalize}}
    if kb_path is not None:
        identity.update(kb_fingerprint=kb_fingerprint(kb_path), kb_limit=limit)
    return identity


def cached_index_dir(*, kb_path: str | Path, entity_tower_id: str, config: LinkerConfig) -> Path:
    """The cache folder where the entity index of `kb_path` for this entity tower and config is built once.

    One folder per KB × entity tower × config: every index type built there shares its vectors.
    """
    return cache_dir() / "indexes" / identity_key(index_identity(kb_path=kb_path, checkpoint_id=entity_tower_id,
                                                                  config=config))


def identity_key(identity: Mapping[str, Any]) -> str:
    """A short folder name for an index identity."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def weights_identity(module: torch.nn.Module) -> str:
    """sha256 over a module's named fp16 weights: equal for equal weights, whatever file or model holds them."""
    digest = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        digest.update(f"{name}:{tuple(tensor.shape)}".encode())
        value = tensor.detach().cpu()
        digest.update((value.half() if value.is_floating_point() else value).contiguous().numpy().tobytes())
    return digest.hexdigest()


def entity_tower_id(retriever: torch.nn.Module) -> str:
    """Identity of a retriever's entity-tower weights: what a KB index depends on (a new passage tower keeps it)."""
    return weights_identity(retriever.entity_tower)


def read_manifest(directory: Path) -> dict[str, Any]:
    """The folder's manifest, or {} when it has none yet."""
    path = directory / MANIFEST
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def stored_titles(directory: Path) -> tuple[list[str], list[str | None]]:
    """The folder's titles and QIDs by row (None where a row has no QID)."""
    titles = (directory / "titles.txt").read_text(encoding="utf-8").split("\n")[:-1]
    qids = [q or None for q in (directory / "qids.txt").read_text(encoding="utf-8").split("\n")[:-1]]
    return titles, qids


def write_json(path: Path, value: Any) -> None:
    """Write `value` as JSON then rename, so an interruption never leaves half a file behind."""
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    partial.replace(path)


def save_npy(path: Path, array: np.ndarray) -> None:
    """Write `array` as a .npy file through a memory map."""
    stored = np.lib.format.open_memmap(path, mode="w+", dtype=array.dtype, shape=array.shape)
    stored[:] = array
    stored.flush()


def faiss_path(directory: Path, index_type: str) -> Path:
    """Where the folder keeps its approximate search index of `index_type`."""
    return directory / f"faiss-{index_type}.index"


def write_compact_vectors(directory: str | Path, vectors: np.ndarray) -> None:
    """Store (rows, dim) vectors in `directory` as 8-bit scalar codes (per-dimension range) instead of
    embeddings.npy: a quarter of float32, half of float16, for an index that ships in the repository."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    codes = faiss.IndexScalarQuantizer(vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    codes.train(vectors)
    codes.add(vectors)
    faiss.write_index(codes, str(Path(directory) / COMPACT_VECTORS))


def stored_vectors(directory: Path) -> np.ndarray:
    """embeddings.npy memory-mapped, or the compact codes decoded to float16 (so every search path is the same)."""
    if (directory / "embeddings.npy").is_file() or not (directory / COMPACT_VECTORS).is_file():
        return np.load(directory / "embeddings.npy", mmap_mode="r")
    codes = faiss.read_index(str(directory / COMPACT_VECTORS))
    return codes.reconstruct_n(0, codes.ntotal).astype(np.float16)


def release_pages(array: np.ndarray) -> None:
    """Unmap the pages of a memory-mapped array that reading it brought in (`madvise(MADV_DONTNEED)`); a no-op for
    an array in memory.

    A read-only file mapping's pages stay in the OS's page cache, shared and reclaimable, and a later read maps
    them again; but while mapped they count in the process's resident set. Reading all of a 1M-entity KB's vectors
    once, to copy them into a search index, would otherwise keep 0.75 GB of them in every worker's RSS and peak.
    """
    while array is not None and not isinstance(getattr(array, "_mmap", None), mmap.mmap):
        array = array.base if isinstance(array.base, np.ndarray) else None
    if array is not None:
        array._mmap.madvise(mmap.MADV_DONTNEED)


def read_rows(array: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`array[rows]` (an array of the rows, in their order), read with `pread` from the file of an array that
    `np.load(mmap_mode="r")` mapped, rather than through its mapping; an array in memory is indexed as usual.

    A read through the mapping maps the page cache's pages around each row (here ~220 kB a row): the ~1,200
    rows a document's search rescores mapped 0.28 GB, which counted in the worker's peak until released.
    """
    rows = np.asarray(rows, dtype=np.int64)
    if not (isinstance(array, np.memmap) and isinstance(array.base, mmap.mmap) and array.filename
            and array.flags.c_contiguous and array.ndim >= 1):
        return np.asarray(array[rows])
    if rows.size and (rows.min() < 0 or rows.max() >= len(array)):
        raise IndexError(f"rows outside 0..{len(array) - 1}")
    found = np.empty((len(rows), *array.shape[1:]), dtype=array.dtype)
    row_bytes = found.itemsize * int(np.prod(array.shape[1:], dtype=np.int64))
    into = memoryview(found.reshape(-1).view(np.uint8))
    with open(array.filename, "rb", buffering=0) as file:
        for i, row in enumerate(rows.tolist()):
            if os.preadv(file.fileno(), [into[i * row_bytes:(i + 1) * row_bytes]],
                         array.offset + row * row_bytes) != row_bytes:
                raise OSError(f"{array.filename} ends before row {row}")
    return found
