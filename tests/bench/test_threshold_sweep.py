"""The γ sweep filters one low-γ run; that must equal linking at each higher γ."""
from __future__ import annotations

import dataclasses

from annotator.pipeline.linker import Linker
from bench.threshold_sweep import above
from gerbil.client import InProcessAnnotator, Task
from nif.data_types import NifDocument

TEXT = "SOCCER - Lyon beat Paris Saint-Germain 2-1 in the French league on Saturday in front of 40,000 fans."


def test_filtering_a_low_threshold_run_equals_running_at_the_higher_threshold(tiny_linker: Linker) -> None:
    document = NifDocument(uri="http://example.org/doc#char=0,", text=TEXT)
    low = InProcessAnnotator(tiny_linker, with_confidence=True).annotate(document, task=Task.A2KB)
    scores = sorted(a.confidence for a in low.annotations)
    assert len(set(scores)) > 2  # γ = 0: the random reader labels spans, so the comparison is not vacuous
    threshold = scores[len(scores) // 2]  # a score itself: the linker keeps p > γ, so this mention goes
    higher = dataclasses.replace(tiny_linker, decoding=dataclasses.replace(tiny_linker.decoding, threshold=threshold))
    direct = InProcessAnnotator(higher).annotate(document, task=Task.A2KB)
    filtered = above(low, threshold)
    assert 0 < len(filtered.annotations) < len(low.annotations)
    assert [(a.start, a.end, a.uris) for a in filtered.annotations] == \
        [(a.start, a.end, a.uris) for a in direct.annotations]
    assert all(a.confidence is None for a in filtered.annotations)
