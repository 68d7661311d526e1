"""What the KB knows, as arrays: the entity graph (which entries each description names), each entry's prominence
(how many descriptions name it) and the name priors (which entries a name means, with counts), with the identity
of what they were built from."""
from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse

from annotator.errors import ModelLoadError
from annotator.knowledge.names import name_hashes

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
ARRAYS = "tables.npz"


@dataclass(frozen=True)
class NameCounts:
    """The KB rows one name means, with how often: in the training links and in the KB's descriptions."""

    rows: np.ndarray  # (m,) int32
    linked: np.ndarray  # (m,) int32: training links of the name to the row (the checkpoint's mentions.tsv)
    described: np.ndarray  # (m,) int32: descriptions naming the row so, its own lead's names included

    def __len__(self) -> int:
        return len(self.rows)


@dataclass(frozen=True, eq=False)
class NamePriors:
    """name → `NameCounts`, keyed by the names' 64-bit hashes (`annotator.knowledge.names.name_hashes`), sorted."""

    keys: np.ndarray  # (names,) uint64, sorted
    indptr: np.ndarray  # (names + 1,) int64
    rows: np.ndarray  # (pairs,) int32
    linked: np.ndarray  # (pairs,) int32
    described: np.ndarray  # (pairs,) int32

    @classmethod
    def from_counts(cls, counts: Mapping[str, Mapping[int, tuple[int, int]]]) -> NamePriors:
        """From name → row → (linked, described); names that fold alike (`name_key`) are merged."""
        names = list(counts)
        hashes = name_hashes(names)
        merged: dict[int, dict[int, list[int]]] = {}
        for key, name in zip(hashes.tolist(), names):
            target = merged.setdefault(key, {})
            for row, (linked, described) in counts[name].items():
                pair = target.setdefault(row, [0, 0])
                pair[0] += linked
                pair[1] += described
        keys = np.array(sorted(merged), dtype=np.uint64)
        sizes = np.array([len(merged[int(k)]) for k in keys], dtype=np.int64)
        indptr = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        entries = [(row, pair) for k in keys.tolist() for row, pair in sorted(merged[k].items())]
        return cls(keys, indptr, np.array([row for row, _ in entries], dtype=np.int32),
                   np.array([pair[0] for _, pair in entries], dtype=np.int32),
                   np.array([pair[1] for _, pair in entries], dtype=np.int32))

    def __len__(self) -> int:
        return len(self.keys)

    def lookup(self, name: str) -> NameCounts:
        """What `name` means (folded as `name_key`); empty when unknown."""
        key = name_hashes([name])[0]
        i = int(np.searchsorted(self.keys, key))
        if i == len(self.keys) or self.keys[i] != key:
            return NameCounts(*(np.zeros(0, dtype=np.int32) for _ in range(3)))
        part = slice(self.indptr[i], self.indptr[i + 1])
        return NameCounts(self.rows[part], self.linked[part], self.described[part])


@dataclass(frozen=True, eq=False)
class Knowledge:
    """The KB's knowledge tables, by index row (KB order).

    Attributes:
        graph: (n, n) CSR, 1 where row i's description names entry j (never i itself).
        priors: the name priors.
        identity: what the tables were built from (`knowledge_identity`); compared on load.
    """

    graph: scipy.sparse.csr_matrix
    priors: NamePriors
    identity: Mapping[str, Any]

    def __len__(self) -> int:
        return self.graph.shape[0]

    @cached_property
    def in_links(self) -> np.ndarray:
        """(n,) int32: prominence, the number of other descriptions that name each entry."""
        return np.asarray(self.graph.sum(axis=0)).ravel().astype(np.int32)

    @cached_property
    def related(self) -> scipy.sparse.csr_matrix:
        """(n, n) CSR: entries related either way (one names the other)."""
        both = (self.graph + self.graph.T).tocsr()
        both.data[:] = 1
        return both

    def neighbours(self, row: int) -> np.ndarray:
        """The sorted rows related to `row`."""
        related = self.related
        return related.indices[related.indptr[row]:related.indptr[row + 1]]

    def save(self, directory: str | Path) -> Path:
        """Write the tables into `directory` (replaced whole: written beside it, then renamed)."""
        directory = Path(directory)
        partial = directory.with_name(directory.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        graph = self.graph.tocsr()
        np.savez_compressed(partial / ARRAYS, graph_indptr=graph.indptr.astype(np.int64), graph_indices=graph.indices,
                 rows=np.int64(graph.shape[0]), prior_keys=self.priors.keys, prior_indptr=self.priors.indptr,
                 prior_rows=self.priors.rows, prior_linked=self.priors.linked,
                 prior_described=self.priors.described)
        manifest = {"identity": dict(self.identity), "entities": len(self), "graph_edges": int(graph.nnz),
                    "names": len(self.priors), "name_entity_pairs": int(len(self.priors.rows))}
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if directory.exists():
            shutil.rmtree(directory)
        partial.rename(directory)
        return directory

    @classmethod
    def load(cls, directory: str | Path, *, identity: Mapping[str, Any] | None = None) -> Knowledge:
        """Read tables written by `save`.

        Raises:
            ModelLoadError: the folder is incomplete, or was built from something other than `identity`.
        """
        directory = Path(directory)
        if not (directory / MANIFEST).is_file() or not (directory / ARRAYS).is_file():
            raise ModelLoadError(f"{directory} holds no knowledge tables (build them with python -m "
                                 f"annotator.knowledge)")
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        if identity is not None and manifest["identity"] != dict(identity):
            raise ModelLoadError(f"the knowledge tables in {directory} were built from {manifest['identity']}, "
                                 f"not from {dict(identity)}; build them again with python -m annotator.knowledge")
        arrays = np.load(directory / ARRAYS)
        rows = int(arrays["rows"])
        indices = arrays["graph_indices"]
        graph = scipy.sparse.csr_matrix((np.ones(len(indices), dtype=np.int8), indices, arrays["graph_indptr"]),
                                        shape=(rows, rows))
        priors = NamePriors(arrays["prior_keys"], arrays["prior_indptr"], arrays["prior_rows"], arrays["prior_linked"],
                            arrays["prior_described"])
        return cls(graph, priors, manifest["identity"])
