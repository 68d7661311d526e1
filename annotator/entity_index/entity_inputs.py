"""The entity inputs the reader reads: `[CLS] title [unused2] description [SEP]` ids, tokenized once when an
index folder is built and stored 0-padded to `max_entity_len`, then gathered by row for each reader batch."""
from __future__ import annotations

import numpy as np

from annotator.entity_index.folder import read_rows
from annotator.model.tokenization import InputBuilder, right_padded


def padded_entity_rows(builder: InputBuilder, titles: list[str], texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(len, max_entity_len) int32 0-padded entity ids and their (len,) int32 lengths."""
    ids, lengths = right_padded(builder.entity_inputs(titles, texts), 0)
    padded = np.zeros((len(ids), builder.config.max_entity_len), dtype=np.int32)
    padded[:, : ids.shape[1]] = ids
    return padded, lengths.astype(np.int32)


def gather_entity_rows(entity_ids: np.ndarray, lengths: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stored ids of the given rows, (rows, longest) right-padded, and their lengths (nothing is tokenized;
    a memory map's rows read from its file, `read_rows`)."""
    rows = np.asarray(rows, dtype=np.int64)
    row_lengths = read_rows(lengths, rows).astype(np.int64)
    return np.ascontiguousarray(read_rows(entity_ids, rows)[:, : row_lengths.max(initial=0)]), row_lengths
