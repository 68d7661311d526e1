"""`entqa link --ray`: a corpus linked by a pool of linker actors on Ray Data, locally or on a Ray cluster.

The driver (the machine running `entqa link --ray`) reads the input, leaves out the documents whose ids the output
folder already holds, hands the rest to Ray Data as blocks of `batch_size` documents, and writes each block's rows
(`id`, `text`, `spans`, `mentions`) to a file of its own as it comes back: written to `NAME.tmp`, then renamed, so
that a part file is either complete or absent. An interrupted run started again therefore links only what no part
file holds yet. Each actor loads the model and the entity index once; Ray restarts a killed actor and retries its
blocks (Ray Data's `max_restarts`/`max_task_retries` of -1 for actor pools), and a block reaches the driver once,
so every row is written once.
"""
from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from annotator.cli.documents import InputDocument, InputError, parse_record, read_documents
from annotator.data_types import Mention
from annotator.settings import LinkerSettings

if TYPE_CHECKING:
    import pyarrow

RAY_INSTALL_HINT = 'pip install "entqa-nif-annotator[ray]" (from a checkout: pip install -e ".[ray]")'
OUTPUT_FORMATS = ("jsonl", "parquet")
PART_PREFIX = "part-"
PARQUET_SUFFIX = ".parquet"
# Where the library keeps what it derives (unpacked encoders, KB indexes): the actors' must be the driver's.
CACHE_ENV = "ENTQA_CACHE"
MENTION_KEYS = ("start", "end", "surface", "title", "uri", "score")


class RayMissingError(RuntimeError):
    """Ray is an optional extra; the message says how to install it."""


def import_ray() -> Any:
    """The `ray` module with Ray Data, or RayMissingError naming the extra to install."""
    try:
        import ray
        import ray.data  # noqa: F401  (the `data` extra: pyarrow, pandas)
    except ImportError as error:
        raise RayMissingError(f"--ray needs Ray Data, which is not installed ({error}); install it with "
                              f"{RAY_INSTALL_HINT}") from error
    return ray


def read_corpus(sources: Sequence[str]) -> list[InputDocument]:
    """The documents of JSON-lines and Parquet files (a `.parquet` suffix: Parquet), with unique ids.

    Raises:
        InputError: an unreadable file, an invalid row, a repeated id, or ids mixing strings and integers.
    """
    documents: list[InputDocument] = []
    for source in sources:
        documents.extend(_parquet_documents(source) if source.endswith(PARQUET_SUFFIX)
                         else read_documents([source], "jsonl"))
    seen: set[str | int] = set()
    for document in documents:
        if document.id in seen:
            # the output is matched to the input by id: a resumed run could not tell two such rows apart
            raise InputError(f"id {document.id!r} occurs more than once; --ray needs unique ids")
        seen.add(document.id)
    if len({type(document.id) for document in documents}) > 1:
        raise InputError("ids mix strings and integers; --ray needs them all of one kind (one Arrow column)")
    return documents


def _parquet_documents(source: str) -> list[InputDocument]:
    import pyarrow.parquet

    try:
        rows = pyarrow.parquet.read_table(source).to_pylist()
    except (OSError, pyarrow.ArrowException) as error:
        raise InputError(f"cannot read {source} as Parquet: {error}") from error
    documents = []
    for number, row in enumerate(rows, start=1):
        try:
            documents.append(parse_record({key: value for key, value in row.items() if value is not None}))
        except InputError as error:
            raise InputError(f"{source}, row {number}: {error}") from error
    return documents


def linked_ids(output_dir: Path) -> set[str | int]:
    """The ids of the rows the finished part files of `output_dir` hold (a `.tmp` file is an unfinished one)."""
    import pyarrow.parquet

    ids: set[str | int] = set()
    for path in sorted(output_dir.glob(f"{PART_PREFIX}*")):
        if path.suffix == PARQUET_SUFFIX:
            ids.update(pyarrow.parquet.read_table(path, columns=["id"]).column("id").to_pylist())
        elif path.suffix == ".jsonl":
            ids.update(json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines() if line)
    return ids


class LinkerActor:
    """One Ray actor's linker, loaded once; called with a block of documents, answers them with their mentions."""

    def __init__(self, model_dir: str, kb_path: str | None, index_dir: str | None, device: str | None,
                 settings: LinkerSettings) -> None:
        from annotator.pipeline.linker import Linker

        self.linker = Linker.from_pretrained(model_dir, kb_path=kb_path, index_dir=index_dir, device=device,
                                             config_overrides=settings.model, runtime=settings.runtime)

    def __call__(self, block: pyarrow.Table) -> pyarrow.Table:
        rows = block.to_pylist()
        spans = [None if row["spans"] is None else [tuple(span) for span in row["spans"]] for row in rows]
        found = self.linker.link_batch([row["text"] for row in rows], spans)
        return _rows_table([{**row, "mentions": [_mention_record(m) for m in mentions]}
                            for row, mentions in zip(rows, found)])


def _mention_record(mention: Mention) -> dict[str, Any]:
    return {key: getattr(mention, key) for key in MENTION_KEYS}


def _rows_table(rows: list[dict[str, Any]]) -> pyarrow.Table:
    import pyarrow

    mention = pyarrow.struct([("start", pyarrow.int64()), ("end", pyarrow.int64()), ("surface", pyarrow.string()),
                              ("title", pyarrow.string()), ("uri", pyarrow.string()), ("score", pyarrow.float64())])
    # Explicit types: a block with no spans or no mentions would otherwise get a null-typed column.
    return pyarrow.table({
        "id": [row["id"] for row in rows],
        "text": pyarrow.array([row["text"] for row in rows], pyarrow.string()),
        "spans": pyarrow.array([row["spans"] for row in rows], pyarrow.list_(pyarrow.list_(pyarrow.int64()))),
        "mentions": pyarrow.array([row["mentions"] for row in rows], pyarrow.list_(mention)),
    })


def link_corpus(documents: Sequence[InputDocument], output_dir: Path, *, model_dir: Path, kb_path: Path | None,
                index_dir: Path | None, device: str | None, settings: LinkerSettings, address: str | None,
                actors: int, batch_size: int, output_format: str) -> int:
    """Links the documents whose ids `output_dir` does not hold yet on a pool of `actors` Ray actors, writing each
    finished block to a part file; returns how many documents this run linked.

    `settings`: the linker's, as the service reads them from the ENTQA_* variables; `address`: a Ray cluster's
    (None: $RAY_ADDRESS, else a Ray started here for the run). Every path must exist at the same place on every
    node of a cluster.
    """
    if output_format not in OUTPUT_FORMATS:
        raise ValueError(f"output format must be one of {', '.join(OUTPUT_FORMATS)}, got {output_format!r}")
    ray = import_ray()
    output_dir.mkdir(parents=True, exist_ok=True)
    done = linked_ids(output_dir)
    todo = [document for document in documents if document.id not in done]
    if not todo:
        return 0
    if not ray.is_initialized():
        # The actors get their settings as arguments; only the cache folder is this shell's, on every node.
        cache = {CACHE_ENV: os.environ[CACHE_ENV]} if CACHE_ENV in os.environ else {}
        ray.init(address=address, runtime_env={"env_vars": cache}, log_to_driver=False)
    gpus = ray.cluster_resources().get("GPU", 0)
    rows = [{"id": d.id, "text": d.text, "spans": None if d.spans is None else [list(s) for s in d.spans]}
            for d in todo]
    dataset = ray.data.from_items(rows, override_num_blocks=math.ceil(len(rows) / batch_size))
    linked = dataset.map_batches(
        LinkerActor, batch_format="pyarrow", batch_size=batch_size, concurrency=actors,
        fn_constructor_kwargs={"model_dir": str(model_dir.resolve()), "kb_path": _absolute(kb_path),
                               "index_dir": _absolute(index_dir), "device": device, "settings": settings},
        # Fault tolerance is Ray Data's default for an actor pool (max_restarts=-1, max_task_retries=-1): a killed
        # actor is started again and its blocks linked again. Passing them here is deprecated since Ray 2.60.
        num_gpus=1 if gpus else 0, num_cpus=1)
    _write_parts(linked.iter_batches(batch_size=None, batch_format="pyarrow"), output_dir, output_format)
    return len(todo)


def _absolute(path: Path | None) -> str | None:
    return None if path is None else str(path.resolve())


def _write_parts(blocks: Iterator[pyarrow.Table], output_dir: Path, output_format: str) -> None:
    # One name per run and block: a resumed run never overwrites what an earlier one wrote.
    run = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    for number, block in enumerate(blocks):
        path = output_dir / f"{PART_PREFIX}{run}-{number:05d}.{output_format}"
        partial = path.with_name(path.name + ".tmp")
        if output_format == "parquet":
            import pyarrow.parquet

            pyarrow.parquet.write_table(block, partial)
        else:
            with partial.open("w", encoding="utf-8") as out:
                out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in block.to_pylist())
        os.replace(partial, path)
