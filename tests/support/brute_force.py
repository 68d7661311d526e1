"""The reference every index test compares with: exact top k by a full fp32 product."""
from __future__ import annotations

import numpy as np


def brute_force(embeddings: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, k) scores and rows of the k best `embeddings` rows for each query, best first."""
    scores = queries @ embeddings.astype(np.float32).T  # (n, rows)
    rows = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, rows, axis=1), rows
