"""The profile bench's stage table: the annotator's functions only, per document, costliest first."""
from __future__ import annotations

import cProfile
import pstats

import numpy as np
import pytest

from annotator.pipeline.decoding import decode_passage
from bench.profile_linker import stage_table


def test_the_stage_table_lists_annotator_functions_per_document_costliest_first() -> None:
    rng = np.random.default_rng(0)
    logits = [rng.normal(size=(8, 20)), rng.normal(size=(8, 20)), rng.normal(size=8)]
    profiler = cProfile.Profile()
    for _ in range(3):
        profiler.runcall(decode_passage, *logits, top_spans=3, max_span_len=10, threshold=0.0)
    stats = pstats.Stats(profiler)
    lines = stage_table(stats, documents=3, top=50).splitlines()
    assert "annotator/ function" in lines[0]
    rows = [line.split() for line in lines[1:]]
    assert rows and all(row[2].startswith("annotator/") for row in rows)  # numpy's own functions are left out
    decode = next(row for row in rows if row[3] == "decode_passage")
    assert decode[1] == "3"
    seconds = next(v[3] for k, v in stats.stats.items() if k[2] == "decode_passage")
    assert float(decode[0]) == pytest.approx(1000 * seconds / 3, abs=0.006)
    assert [float(row[0]) for row in rows] == sorted((float(row[0]) for row in rows), reverse=True)
