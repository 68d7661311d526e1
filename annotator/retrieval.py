"""The entity index: KB embeddings, pre-tokenized entity ids and a faiss index, built once and memory-mapped.

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
    faiss-TYPE.index    an approximate search index ("hnsw", "ivfpq"), one per type built; an exact index is
                        rebuilt from embeddings.npy at load. The vectors are shared, so a new type never re-encodes.
"""
from __future__ import annotations

import collections
import hashlib
import itertools
import json
import logging
import math
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import faiss
import numpy as np
import torch
from tqdm.auto import tqdm

from annotator.data_types import Entity
from annotator.errors import ConfigError, ModelLoadError
from annotator.exact_search import Bf16ExactIndex, TorchExactIndex
from annotator.kb import kb_fingerprint, read_kb
from annotator.quantization import multiplies_bf16
from annotator.tokenization import Batch, InputBuilder, right_padded

logger = logging.getLogger(__name__)

MANIFEST = "manifest.json"
_TOKENIZE_CHUNK = 10_000
_TOKENIZE_WORKERS = 16
_SAVE_EVERY_BATCHES = 20  # encoded batches between progress checkpoints
_FORMAT_VERSION = 1
# Below this many queries faiss scans every vector once per query; a document's ~20 passages search 1M
# vectors about 2.8x faster as one BLAS product (docs/decisions.md#blas-exact-search).
faiss.cvar.distance_compute_blas_threshold = 1

# Config fields that change the stored ids or vectors; an index built under other values is stale.
INDEX_CONFIG_FIELDS = ("encoder", "max_entity_len", "pooling", "normalize")


def _flat(dim: int, rows: int) -> faiss.Index:
    return faiss.IndexFlatIP(dim)


# HNSW's search breadth, set at load (a search setting, not part of the built graph). On the 1M-entity KB
# with AIDA-A passages, 256 kept 98.2 % of the exact top 100 but lost 3.5 points of gold R@100 (title-only
# entities sit in dense regions); 1024 keeps 99.7 % and gold R@100 within 0.3 (docs/decisions.md#hnsw-ef-search).
HNSW_EF_SEARCH = 1024


def _hnsw(dim: int, rows: int) -> faiss.Index:
    index = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 200
    index.hnsw.efSearch = HNSW_EF_SEARCH
    return index


def _ivfpq(dim: int, rows: int) -> faiss.Index:
    # Product codes alone lose ~40 points of R@100 against exact search, so an fp16 copy of the vectors
    # re-scores the best k_factor × k codes. SQ8 re-scoring (half the size) reorders the near-ties around
    # rank 100 and caps R@100 1.5 points below exact (docs/decisions.md#ivfpq-fp16-rescoring).
    # The coarse quantizer stays flat: an HNSW over the centroids sends most vectors of near-orthogonal
    # topic clusters to the wrong list (14 % right on the synthetic 6M stand-in), which capped R@100 at 73.
    # faiss wants ~39 training points per list and 2**bits per PQ code book.
    lists = max(1, min(int(4 * math.sqrt(rows)), rows // 39))
    sub_quantizers = next(m for m in range(max(dim // 8, 1), 0, -1) if dim % m == 0)
    bits = max(1, min(8, int(math.log2(max(rows, 2)))))
    index = faiss.index_factory(dim, f"IVF{lists},PQ{sub_quantizers}x{bits},Refine(SQfp16)",
                                faiss.METRIC_INNER_PRODUCT)
    faiss.extract_index_ivf(index).nprobe = min(lists, 64)
    index.k_factor = 8
    return index


INDEX_FACTORIES: dict[str, Callable[[int, int], faiss.Index]] = {"flat": _flat, "hnsw": _hnsw, "ivfpq": _ivfpq}


def new_faiss_index(index_type: str, dim: int, rows: int) -> faiss.Index:
    """An empty faiss inner-product index of the named type for `rows` vectors of size `dim`.

    Raises:
        ConfigError: the name is not in `INDEX_FACTORIES`.
    """
    check_index_type(index_type)
    return INDEX_FACTORIES[index_type](dim, rows)


def check_index_type(index_type: str) -> None:
    """Raises ConfigError, listing the valid names, when `index_type` is not in `INDEX_FACTORIES`."""
    if index_type not in INDEX_FACTORIES:
        raise ConfigError(f"unknown index type {index_type!r}; valid types: {sorted(INDEX_FACTORIES)}")


def index_identity(*, kb_path: str | Path | None, checkpoint_id: str, config: Mapping[str, Any],
                   limit: int | None = None) -> dict[str, Any]:
    """What an index folder is built from (stored in its manifest, compared on load).

    Without `kb_path` the KB keys are left out, so that a comparison checks the model side only.
    """
    identity = {"format": _FORMAT_VERSION, "checkpoint": checkpoint_id,
                "config": {k: config[k] for k in INDEX_CONFIG_FIELDS}}
    if kb_path is not None:
        identity.update(kb_fingerprint=kb_fingerprint(kb_path), kb_limit=limit)
    return identity


def identity_key(identity: Mapping[str, Any]) -> str:
    """A short folder name for an index identity."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


class EntityEncoder(Protocol):
    """What encodes a KB: a `DualEncoder`, or its entity tower under ONNX Runtime (`OnnxInt8EntityEncoder`)."""

    @property
    def dim(self) -> int: ...

    @property
    def device(self) -> torch.device: ...

    @property
    def precision(self) -> str: ...

    def embed_entities(self, batch: Batch) -> torch.Tensor: ...


class EntityIndex:
    """Entity metadata, token ids, vectors and a faiss index over them; rows are KB line positions."""

    def __init__(self, directory: Path, manifest: Mapping[str, Any], titles: list[str], qids: list[str | None],
                 entity_ids: np.ndarray, lengths: np.ndarray, embeddings: np.ndarray,
                 index: faiss.Index | TorchExactIndex | Bf16ExactIndex, index_type: str) -> None:
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

    # -- building ----------------------------------------------------------------------------
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
        check_index_type(index_type)  # before any work
        identity = index_identity(kb_path=kb_path, checkpoint_id=checkpoint_id,
                                  config=builder.config.to_dict(), limit=limit)
        manifest = _read_manifest(directory)
        if manifest.get("identity") != identity:
            manifest = {"identity": identity, "complete": False, "encoded_with": encoder.precision}
            _tokenize_kb(directory, kb_path=kb_path, builder=builder, limit=limit)
            _write_json(directory / "progress.json", {"encoded": 0})
            _write_json(directory / MANIFEST, manifest)
        if not manifest["complete"]:
            _encode(directory, encoder=encoder, builder=builder, batch_size=batch_size)
            embeddings = np.load(directory / "embeddings.npy", mmap_mode="r")
            manifest.update(complete=True, rows=int(embeddings.shape[0]), dim=int(embeddings.shape[1]))
            _write_json(directory / MANIFEST, manifest)
            (directory / "progress.json").unlink(missing_ok=True)
        if index_type != "flat" and not _faiss_path(directory, index_type).is_file():
            _write_faiss(directory, _stored_vectors(directory), index_type)
        return cls.load(directory, identity=identity, index_type=index_type, use_gpu=use_gpu)

    # -- loading ------------------------------------------------------------------------------
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
        manifest = _read_manifest(directory)
        if not manifest.get("complete"):
            raise ModelLoadError(f"{directory} holds no finished entity index; build it with "
                                 f"python -m annotator.index --model DIR --kb PATH --out {directory}")
        stale = sorted(k for k in identity or {} if manifest["identity"].get(k) != identity[k])
        if stale:
            raise ModelLoadError(f"the index in {directory} was built for another {', '.join(stale)} "
                                 f"({ {k: manifest['identity'].get(k) for k in stale} }); rebuild it")
        titles = (directory / "titles.txt").read_text(encoding="utf-8").split("\n")[:-1]
        qids = [q or None for q in (directory / "qids.txt").read_text(encoding="utf-8").split("\n")[:-1]]
        entity_ids = np.load(directory / "entity_ids.npy", mmap_mode="r")
        lengths = np.load(directory / "entity_lengths.npy", mmap_mode="r")
        embeddings = _stored_vectors(directory)
        check_index_type(index_type)  # an unknown name is a ConfigError, not a missing file
        if use_gpu is None:
            use_gpu = torch.cuda.is_available()
        faiss_gpu = use_gpu and hasattr(faiss, "StandardGpuResources")
        index: faiss.Index | TorchExactIndex | Bf16ExactIndex
        if index_type == "flat" and use_gpu and not faiss_gpu:
            index = TorchExactIndex(embeddings, torch.device("cuda"))
        elif index_type == "flat" and not use_gpu and multiplies_bf16():
            index = Bf16ExactIndex(embeddings)
        elif index_type == "flat":
            index = _exact_index(embeddings)
        elif _faiss_path(directory, index_type).is_file():
            index = faiss.read_index(str(_faiss_path(directory, index_type)))
            if isinstance(index, faiss.IndexHNSW):
                index.hnsw.efSearch = HNSW_EF_SEARCH
        else:
            raise ModelLoadError(f"{directory} holds no {index_type} index; add it with python -m annotator.index "
                                 f"--model DIR --kb PATH --out {directory} --index-type {index_type}")
        if not len(titles) == len(entity_ids) == len(embeddings) == index.ntotal:
            raise ModelLoadError(f"{directory} is inconsistent: {len(titles)} titles, {len(entity_ids)} id rows, "
                                 f"{len(embeddings)} vectors, {index.ntotal} indexed")
        if faiss_gpu:
            index = _to_gpu(index)
        logger.info("loaded entity index %s: %d entities, %s", directory, index.ntotal, index_type)
        return cls(directory, manifest, titles, qids, entity_ids, lengths, embeddings, index, index_type)

    # -- use -----------------------------------------------------------------------------------
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
        """The stored entity input ids of the given rows, (rows, longest) right-padded, and their lengths
        (nothing is tokenized; one gather from the memory map, not a slice per row)."""
        rows = np.asarray(rows, dtype=np.int64)
        lengths = np.asarray(self.lengths[rows], dtype=np.int64)
        return np.asarray(self.entity_ids[rows, : lengths.max(initial=0)]), lengths

    def entity_token_ids(self, rows: Iterable[int]) -> list[list[int]]:
        """`entity_rows` as lists."""
        ids, lengths = self.entity_rows(np.fromiter(rows, dtype=np.int64))
        return [row[:n].tolist() for row, n in zip(ids, lengths)]


def weights_identity(module: torch.nn.Module) -> str:
    """sha256 over a module's named fp16 weights: equal for equal weights, whatever file or model holds them."""
    digest = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        digest.update(f"{name}:{tuple(tensor.shape)}".encode())
        value = tensor.detach().cpu()
        digest.update((value.half() if value.is_floating_point() else value).contiguous().numpy().tobytes())
    return digest.hexdigest()


def _read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _write_json(path: Path, value: Any) -> None:
    # Write then rename, so an interruption never leaves half a file behind.
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    partial.replace(path)


def _batched(items: Iterable[Entity], size: int) -> Iterable[list[Entity]]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def _tokenize_kb(directory: Path, *, kb_path: str | Path, builder: InputBuilder, limit: int | None) -> None:
    """Write titles, qids, entity ids and lengths (streamed in chunks; RAM holds a few chunks of texts)."""
    directory.mkdir(parents=True, exist_ok=True)
    width = builder.config.max_entity_len
    chunks = _batched(itertools.islice(read_kb(kb_path), limit), _TOKENIZE_CHUNK)
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
    _save_npy(directory / "entity_lengths.npy", lengths)
    _save_npy(directory / "entity_ids.npy", np.fromfile(ids_path, dtype=np.int32).reshape(len(lengths), width))
    ids_path.unlink()
    lengths_path.unlink()
    logger.info("tokenized %d entities from %s", len(lengths), kb_path)


def _tokenized(chunks: Iterator[list[Entity]], builder: InputBuilder
               ) -> Iterator[tuple[list[Entity], tuple[np.ndarray, np.ndarray]]]:
    """Each chunk with its padded id rows and lengths, in order; tokenized by a pool of processes when
    there is more than one chunk: the tokenizer's Python side, serial, is most of the time (docs/decisions.md#gpu-host-work)."""
    first, second = next(chunks, None), next(chunks, None)
    if second is None:
        yield from ((chunk, _entity_rows(builder, *_texts(chunk))) for chunk in filter(None, [first]))
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


def _entity_rows(builder: InputBuilder, titles: list[str], texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(len, max_entity_len) int32 0-padded entity ids and their (len,) int32 lengths."""
    ids, lengths = right_padded(builder.entity_inputs(titles, texts), 0)
    padded = np.zeros((len(ids), builder.config.max_entity_len), dtype=np.int32)
    padded[:, : ids.shape[1]] = ids
    return padded, lengths.astype(np.int32)


_worker_builder: InputBuilder | None = None


def _set_worker_builder(builder: InputBuilder) -> None:
    global _worker_builder
    _worker_builder = builder


def _worker_entity_rows(titles: list[str], texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    assert _worker_builder is not None
    return _entity_rows(_worker_builder, titles, texts)


def _save_npy(path: Path, array: np.ndarray) -> None:
    stored = np.lib.format.open_memmap(path, mode="w+", dtype=array.dtype, shape=array.shape)
    stored[:] = array
    stored.flush()


def _encode(directory: Path, *, encoder: EntityEncoder, builder: InputBuilder, batch_size: int) -> None:
    """Fill embeddings.npy in length order, recording progress so that a restart continues."""
    entity_ids = np.load(directory / "entity_ids.npy", mmap_mode="r")
    lengths = np.load(directory / "entity_lengths.npy")
    path = directory / "embeddings.npy"
    shape = (len(lengths), encoder.dim)
    done = json.loads((directory / "progress.json").read_text())["encoded"]
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
            if count % _SAVE_EVERY_BATCHES == 0 or start + batch_size >= len(order):
                embeddings.flush()
                _write_json(directory / "progress.json", {"encoded": min(start + batch_size, len(order))})
    embeddings.flush()


COMPACT_VECTORS = "embeddings-sq8.index"


def write_compact_vectors(directory: str | Path, vectors: np.ndarray) -> None:
    """Store (rows, dim) vectors in `directory` as 8-bit scalar codes (per-dimension range) instead of
    embeddings.npy: a quarter of float32, half of float16, for an index that ships in the repository."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    codes = faiss.IndexScalarQuantizer(vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    codes.train(vectors)
    codes.add(vectors)
    faiss.write_index(codes, str(Path(directory) / COMPACT_VECTORS))


def _stored_vectors(directory: Path) -> np.ndarray:
    """embeddings.npy memory-mapped, or the compact codes decoded to float16 (so every search path is the same)."""
    if (directory / "embeddings.npy").is_file() or not (directory / COMPACT_VECTORS).is_file():
        return np.load(directory / "embeddings.npy", mmap_mode="r")
    codes = faiss.read_index(str(directory / COMPACT_VECTORS))
    return codes.reconstruct_n(0, codes.ntotal).astype(np.float16)


def _faiss_path(directory: Path, index_type: str) -> Path:
    return directory / f"faiss-{index_type}.index"


def _write_faiss(directory: Path, embeddings: np.ndarray, index_type: str) -> None:
    """Train and fill an approximate index over the stored vectors; written whole or not at all."""
    rows, dim = embeddings.shape
    index = new_faiss_index(index_type, dim, rows)
    if not index.is_trained:
        sample = np.random.default_rng(0).choice(rows, size=min(rows, 256 * 1024), replace=False)
        logger.info("training the %s index on %d vectors", index_type, len(sample))
        index.train(np.asarray(embeddings[np.sort(sample)], dtype=np.float32))
    _add_all(index, embeddings, progress=f"adding to the {index_type} index")
    partial = _faiss_path(directory, index_type).with_suffix(".partial")
    faiss.write_index(index, str(partial))
    partial.replace(_faiss_path(directory, index_type))


def _exact_index(embeddings: np.ndarray) -> faiss.Index:
    index = new_faiss_index("flat", embeddings.shape[1], len(embeddings))
    _add_all(index, embeddings)
    return index


def _add_all(index: faiss.Index, embeddings: np.ndarray, *, progress: str | None = None) -> None:
    starts = range(0, len(embeddings), 100_000)
    for start in tqdm(starts, desc=progress, unit="100k", disable=progress is None):
        index.add(np.asarray(embeddings[start:start + 100_000], dtype=np.float32))


def _to_gpu(index: faiss.Index) -> faiss.Index:
    try:
        options = faiss.GpuMultipleClonerOptions()
        options.useFloat16 = True  # halves GPU memory; inner products keep ~3 significant digits
        return faiss.index_cpu_to_all_gpus(index, co=options)
    except (AttributeError, RuntimeError) as exc:
        logger.warning("faiss index stays on the CPU (%s)", exc)
        return index
