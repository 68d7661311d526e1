"""The linker's settings: one frozen dataclass with the paper's defaults."""
from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from annotator.errors import ConfigError

MERGE_MODES = ("gerbil", "paper")
POOLINGS = ("mean", "cls")
CPU_PRECISIONS = ("auto", "bf16", "int8", "fp32")


@dataclass(frozen=True)
class LinkerConfig:
    """EntQA settings (defaults from the paper, section 2, and the original server).

    Attributes:
        encoder: base encoder: "all-MiniLM-L6-v2", "all-mpnet-base-v2" or a local Hugging Face folder.
        passage_len: L, wordpieces per passage including [CLS] and [SEP].
        stride: S, wordpieces between the starts of consecutive passages.
        add_topic: append the document's first word (ψ_topic) to every passage.
        max_topic_len: at most this many wordpieces of the topic word.
        max_entity_len: wordpieces of title ⊕ description, [CLS]/[SEP] included (paper: 128).
        top_k: K, candidates retrieved per passage (paper: 100).
        top_spans: P, spans kept per candidate (paper: 3).
        max_span_len: longest mention in wordpieces (original server: 10).
        threshold: γ, keep a labelled span when p_rerank × p_span > γ (paper: 0.05); a given span (D2KB)
            whose best entity does not score above γ is answered NIL.
        pooling: retriever vector: "mean" over tokens (what the sentence encoders were trained with)
            or the "cls" vector (the paper's P_1).
        normalize: unit-length retriever vectors, so the inner product is a cosine.
        score_scale: multiplies the retriever's inner product in the training loss (a temperature).
        shared_towers: one encoder for passages and entities (halves the checkpoint).
        shared_embeddings: with separate towers, the passage tower reads the entity tower's word
            embeddings (stored once: a third of MiniLM's weights).
        merge: "gerbil" resolves same-span and overlapping predictions (one per span, best first);
            "paper" only merges exact duplicates (s, t, e), as EntQA did.
        document_candidates: after decoding, read each passage also against the entities linked elsewhere
            in its document whose title shares a capitalised word with the passage outside every mention
            ("Bailey" after "Donovan Bailey"), and add the mentions found outside the first pass's; given
            spans (D2KB) are disambiguated again, with the words inside them. Not in the paper, so off by
            default; +0.8 A2KB and +1.9 D2KB dev F1 for the shipped checkpoint (docs/decisions.md#document-candidates).
        short_names: then link a capitalised run left open (end to end) or a given span answered NIL (D2KB)
            that is the first or last words of exactly one multi-word mention the document linked, to its
            entity ("Cunningham" after "Randall Cunningham"; `annotator.pipeline.short_names`). Not in the paper, so
            off by default; +0.9 A2KB and +1.1 D2KB dev F1 for the shipped checkpoint (docs/decisions.md#short-names).
        mention_candidates: add to each passage's retrieved candidates, for every capitalised name in it, up to this
            many entities the training links gave that name most often (`annotator.pipeline.mention_table`, the checkpoint's
            `mentions.tsv`); the reader decides as for the others. 0 = off (the paper retrieves only); +0.4 A2KB and
            +0.6 D2KB dev F1 for the shipped checkpoint at 3 (docs/decisions.md#mention-table).
        index_type: faiss index for the KB: "flat" (exact inner product), "hnsw" or "ivfpq".
        cpu_precision: how the reader and the KB encoding (entity tower) compute on the CPU: "int8" under
            ONNX Runtime (docs/decisions.md#cpu-int8-onnx), "bf16" in torch (fast only where the CPU multiplies bf16
            matrices in hardware: AMX, docs/decisions.md#bf16-only-with-amx), "fp32", or "auto": bf16 where the CPU has AMX, else int8.
            Passages stay fp32.
        reader_batch_size: (passage, candidate) pairs per reader forward pass on the CPU (small batches stay in the
            CPU caches: under ONNX Runtime int8, 32 measured faster than 16, 64 and 128; docs/decisions.md#reader-batch-32).
        retriever_batch_size: texts per retriever forward pass (on the CPU).
        gpu_batch_size: pairs or texts per forward pass on a GPU, for both modules and the KB encoding: CPU-sized
            batches leave it idle between launches (a document at K=100 is ~2,000 pairs: one pass).
    """

    encoder: str = "all-MiniLM-L6-v2"
    passage_len: int = 32
    stride: int = 16
    add_topic: bool = True
    max_topic_len: int = 4
    max_entity_len: int = 128
    top_k: int = 100
    top_spans: int = 3
    max_span_len: int = 10
    threshold: float = 0.05
    pooling: str = "mean"
    normalize: bool = True
    score_scale: float = 20.0
    shared_towers: bool = False
    shared_embeddings: bool = False
    merge: str = "gerbil"
    document_candidates: bool = False
    short_names: bool = False
    mention_candidates: int = 0
    index_type: str = "flat"
    cpu_precision: str = "auto"
    reader_batch_size: int = 32
    retriever_batch_size: int = 128
    gpu_batch_size: int = 4096

    def __post_init__(self) -> None:
        if self.merge not in MERGE_MODES:
            raise ConfigError(f"merge must be one of {MERGE_MODES}, got {self.merge!r}")
        if self.pooling not in POOLINGS:
            raise ConfigError(f"pooling must be one of {POOLINGS}, got {self.pooling!r}")
        if self.cpu_precision not in CPU_PRECISIONS:
            raise ConfigError(f"cpu_precision must be one of {CPU_PRECISIONS}, got {self.cpu_precision!r}")
        if not 3 <= self.passage_len or not 1 <= self.stride <= self.passage_len - 2:
            raise ConfigError(f"need passage_len >= 3 and 1 <= stride <= passage_len - 2, "
                              f"got passage_len={self.passage_len}, stride={self.stride}")
        if self.mention_candidates < 0:
            raise ConfigError(f"mention_candidates must be 0 (off) or more, got {self.mention_candidates}")
        if not 0.0 <= self.threshold < 1.0:
            raise ConfigError(f"threshold must lie in [0, 1), got {self.threshold}")

    def replace(self, **changes: Any) -> LinkerConfig:
        """A copy with some fields changed (unknown names rejected)."""
        return dataclasses.replace(self, **_checked(changes))

    def batch_sizes(self, device_type: str) -> tuple[int, int]:
        """(reader pairs, retriever texts) per forward pass on a device of this type ("cpu", "cuda", ...)."""
        if device_type == "cpu":
            return self.reader_batch_size, self.retriever_batch_size
        return self.gpu_batch_size, self.gpu_batch_size

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> LinkerConfig:
        return cls(**_checked(_migrated(values)))

    def to_file(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def from_file(cls, path: str | Path) -> LinkerConfig:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def with_env(self, prefix: str = "ENTQA_", environ: Mapping[str, str] | None = None) -> LinkerConfig:
        """Override fields from environment variables such as ENTQA_TOP_K=20 (JSON-parsed values)."""
        environ = os.environ if environ is None else environ
        changes: dict[str, Any] = {}
        for f in fields(self):
            raw = environ.get(prefix + f.name.upper())
            if raw is not None:
                changes[f.name] = _parse_value(raw, type(getattr(self, f.name)))
        return self.replace(**changes)


def _parse_value(raw: str, kind: type) -> Any:
    if kind is str:
        return raw
    try:
        value = json.loads(raw.lower() if kind is bool else raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"cannot read {raw!r} as {kind.__name__}") from exc
    if kind is float and isinstance(value, int):
        value = float(value)
    if not isinstance(value, kind):
        raise ConfigError(f"expected {kind.__name__}, got {raw!r}")
    return value


def _migrated(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """Reads configs saved before `cpu_precision` replaced `cpu_int8` (true meant the fast CPU path)."""
    if "cpu_int8" not in values:
        return values
    migrated = dict(values)
    migrated.setdefault("cpu_precision", "auto" if migrated.pop("cpu_int8") else "fp32")
    return migrated


def _checked(values: Mapping[str, Any]) -> dict[str, Any]:
    known = {f.name for f in fields(LinkerConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"unknown config keys {unknown}; valid keys: {sorted(known)}")
    return dict(values)
