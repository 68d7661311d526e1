"""The offline build of an index folder: tokenize the KB (a process pool), encode it with the entity tower
(resumable) and train the approximate search indexes over the vectors."""
from __future__ import annotations

import collections
import itertools
import json
import logging
import multiprocessing
import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import faiss
import numpy as np
import torch
from tqdm.auto import tqdm

from annotator.data_types import Entity
from annotator.entity_index.entity_inputs import padded_entity_rows
from annotator.entity_index.folder import (MANIFEST, PROGRESS, faiss_path, index_identity, read_manifest, save_npy,
                                           stored_vectors, write_json)
from annotator.entity_index.search import add_all, check_index_type, new_faiss_index
from annotator.kb.reading import read_kb
from annotator.model.tokenization import Batch, InputBuilder

logger = logging.getLogger(__name__)

# Entities per tokenizing task: a KB of more than one chunk is tokenized by a pool of processes.
TOKENIZE_CHUNK = 10_000
_TOKENIZE_WORKERS = 16
# Encoded batches between progress checkpoints: an interrupted build resumes after the last one.
SAVE_EVERY_BATCHES = 20


class EntityEncoder(Protocol):
    """What encodes a KB: a `DualEncoder`, or its entity tower under ONNX Runtime (`OnnxInt8EntityEncoder`)."""

    @property
    def dim(self) -> int: ...

    @property
    def device(self) -> torch.device: ...

    @property
    def precision(self) -> str: ...

    def embed_entities(self, batch: Batch) -> torch.Tensor: ...


def build_folder(directory: Path, *, kb_path: str | Path, encoder: EntityEncoder, builder: InputBuilder,
                 checkpoint_id: str, index_type: str, batch_size: int, limit: int | None) -> dict[str, Any]:
    """Fill an index folder (see `EntityIndex.build` for the arguments) and return its identity; vectors
    there with the same identity are reused, an unfinished encoding continues."""
    check_index_type(index_type)  # before any work
    identity = index_identity(kb_path=kb_path, checkpoint_id=checkpoint_id,
                              config=builder.config, limit=limit)
    manifest = read_manifest(directory)
    if manifest.get("identity") != identity:
        manifest = {"identity": identity, "complete": False, "encoded_with": encoder.precision}
        _tokenize_kb(directory, kb_path=kb_path, builder=builder, limit=limit)
        write_json(directory / PROGRESS, {"encoded": 0})
        write_json(directory / MANIFEST, manifest)
    if not manifest["complete"]:
        _encode(directory, encoder=encoder, builder=builder, batch_size=batch_size)
        embeddings = np.load(directory / "embeddings.npy", mmap_mode="r")
        manifest.update(complete=True, rows=int(embeddings.shape[0]), dim=int(embeddings.shape[1]))
        write_json(directory / MANIFEST, manifest)
        (directory / PROGRESS).unlink(missing_ok=True)
    if index_type != "flat" and not faiss_path(directory, index_type).is_file():
        _write_faiss(directory, stored_vectors(directory), index_type)
    return identity


def _batched(items: Iterable[Entity], size: int) -> Iterable[list[Entity]]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def _tokenize_kb(directory: Path, *, kb_path: str | Path, builder: InputBuilder, limit: int | None) -> None:
    """Write titles, qids, entity ids and lengths (streamed in chunks; RAM holds a few chunks of texts)."""
    directory.mkdir(parents=True, exist_ok=True)
    width = builder.config.max_entity_len
    chunks = _batched(itertools.islice(read_kb(kb_path), limit), TOKENIZE_CHUNK)
    ids_path, lengths_path = directory / "entity_ids.raw", directory / "entity_lengths.raw"
    with (open(directory / "titles.txt", "w", encoding="utf-8") as titles,
          open(directory / "qids.txt", "w", encoding="utf-8") as qids,
          open(ids_path, "wb") as ids_file, open(lengths_path, "wb") as lengths_file):
        for chunk, (padded, lengths) in tqdm(_tokenized(chunks, builder), desc="tokenizing KB", unit="chunk"):
            ids_file.write(padded.tobytes())
            lengths_file.write(lengths.tobytes())
            titles.writelines(e.title.replace("\n", " ") + "\n" for e in chunk)
            qids.writelines((e.qid or "") + "\n" for e in chunk)
    lengths = np.fromfile(lengths_path, dtype=np.int32)
    save_npy(directory / "entity_lengths.npy", lengths)
    save_npy(directory / "entity_ids.npy", np.fromfile(ids_path, dtype=np.int32).reshape(len(lengths), width))
    ids_path.unlink()
    lengths_path.unlink()
    logger.info("tokenized %d entities from %s", len(lengths), kb_path)


def _tokenized(chunks: Iterator[list[Entity]], builder: InputBuilder
               ) -> Iterator[tuple[list[Entity], tuple[np.ndarray, np.ndarray]]]:
    """Each chunk with its padded id rows and lengths, in order; tokenized by a pool of processes when
    there is more than one chunk: the tokenizer's Python side, serial, is most of the time (docs/decisions.md#gpu-host-work)."""
    first, second = next(chunks, None), next(chunks, None)
    if second is None:
        yield from ((chunk, padded_entity_rows(builder, *_texts(chunk))) for chunk in filter(None, [first]))
        return
    workers = min(os.cpu_count() or 1, _TOKENIZE_WORKERS)
    # fork: workers inherit the builder instead of re-importing torch; they never touch a GPU.
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                             initializer=_set_worker_builder, initargs=(builder,)) as pool:
        pending: collections.deque = collections.deque()
        for chunk in itertools.chain([first, second], chunks):
            pending.append((chunk, pool.submit(_worker_entity_rows, *_texts(chunk))))
            if len(pending) > 2 * workers:  # bounded read-ahead
                done, future = pending.popleft()
                yield done, future.result()
        while pending:
            done, future = pending.popleft()
            yield done, future.result()


def _texts(chunk: Sequence[Entity]) -> tuple[list[str], list[str]]:
    return [e.title for e in chunk], [e.text for e in chunk]


# A pool worker's builder, set once by the pool's initializer: sending it with every chunk would pickle the
# tokenizer each time.
_worker_builder: InputBuilder | None = None


def _set_worker_builder(builder: InputBuilder) -> None:
    global _worker_builder
    _worker_builder = builder


def _worker_entity_rows(titles: list[str], texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    assert _worker_builder is not None
    return padded_entity_rows(_worker_builder, titles, texts)


def _encode(directory: Path, *, encoder: EntityEncoder, builder: InputBuilder, batch_size: int) -> None:
    """Fill embeddings.npy in length order, recording progress so that a restart continues."""
    entity_ids = np.load(directory / "entity_ids.npy", mmap_mode="r")
    lengths = np.load(directory / "entity_lengths.npy")
    path = directory / "embeddings.npy"
    shape = (len(lengths), encoder.dim)
    done = json.loads((directory / PROGRESS).read_text())["encoded"]
    if done == 0 or not path.is_file():
        done = 0
        np.lib.format.open_memmap(path, mode="w+", dtype=np.float16, shape=shape).flush()
    embeddings = np.load(path, mmap_mode="r+")
    # Similar lengths share a batch, so padding wastes little; the order is the same after a restart.
    order = np.argsort(lengths, kind="stable")
    starts = range(done, len(order), batch_size)
    with torch.inference_mode():
        for count, start in enumerate(tqdm(starts, desc="encoding entities", unit="batch"), start=1):
            rows = np.sort(order[start:start + batch_size])
            batch = builder.padded_batch(entity_ids[rows], lengths[rows])
            vectors = encoder.embed_entities(batch.to(encoder.device))  # (batch, dim)
            embeddings[rows] = vectors.float().cpu().numpy().astype(np.float16)
            if count % SAVE_EVERY_BATCHES == 0 or start + batch_size >= len(order):
                embeddings.flush()
                write_json(directory / PROGRESS, {"encoded": min(start + batch_size, len(order))})
    embeddings.flush()


def _write_faiss(directory: Path, embeddings: np.ndarray, index_type: str) -> None:
    """Fill an approximate index over the stored vectors; written whole or not at all."""
    rows, dim = embeddings.shape
    index = new_faiss_index(index_type, dim, rows)
    add_all(index, embeddings, progress=f"adding to the {index_type} index")
    partial = faiss_path(directory, index_type).with_suffix(".partial")
    faiss.write_index(index, str(partial))
    partial.replace(faiss_path(directory, index_type))
