"""The host's settings: how this machine searches the index and computes, never saved with the weights (the answers
stay those of the model config, up to the precision's rounding)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, get_args

from annotator.errors import ConfigError

# The names of annotator.entity_index.search.INDEX_FACTORIES (kept here so that settings parse without faiss).
IndexType = Literal["flat", "hnsw"]
CpuPrecision = Literal["auto", "bf16", "int8", "fp32"]


@dataclass(frozen=True)
class RuntimeSettings:
    """How a linker runs on this host.

    Attributes:
        index_type: the KB's search index: "flat" (exact inner product) or "hnsw" (built beside the vectors with
            `python -m annotator.entity_index --index-type hnsw`).
        cpu_precision: how the reader and the KB encoding (entity tower) compute on the CPU: "int8" under
            ONNX Runtime (docs/decisions.md#cpu-int8-onnx), "bf16" in torch (fast only where the CPU multiplies bf16
            matrices in hardware: AMX, docs/decisions.md#bf16-only-with-amx), "fp32", or "auto": bf16 where the CPU
            has AMX, else int8. Passages stay fp32.
        reader_batch_size: (passage, candidate) pairs per reader forward pass on the CPU (small batches stay in the
            CPU caches: under ONNX Runtime int8, 32 measured faster than 16, 64 and 128;
            docs/decisions.md#reader-batch-32).
        retriever_batch_size: texts per retriever forward pass (on the CPU).
        gpu_batch_size: pairs or texts per forward pass on a GPU, for both modules and the KB encoding: CPU-sized
            batches leave it idle between launches (a document at K=100 is ~2,000 pairs: one pass).
    """

    index_type: IndexType = "flat"
    cpu_precision: CpuPrecision = "auto"
    reader_batch_size: int = 32
    retriever_batch_size: int = 128
    gpu_batch_size: int = 4096

    def __post_init__(self) -> None:
        for name, kind in (("index_type", IndexType), ("cpu_precision", CpuPrecision)):
            if getattr(self, name) not in get_args(kind):
                raise ConfigError(f"{name} must be one of {list(get_args(kind))}, got {getattr(self, name)!r}")
        for name in ("reader_batch_size", "retriever_batch_size", "gpu_batch_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be 1 or more, got {getattr(self, name)}")

    def replace(self, **changes: Any) -> RuntimeSettings:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def batch_sizes(self, device_type: str) -> tuple[int, int]:
        """(reader pairs, retriever texts) per forward pass on a device of this type ("cpu", "cuda", ...)."""
        if device_type == "cpu":
            return self.reader_batch_size, self.retriever_batch_size
        return self.gpu_batch_size, self.gpu_batch_size
