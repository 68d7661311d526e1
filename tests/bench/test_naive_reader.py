"""The naive reader (one reader call per pair) must find what the batched pipeline finds."""
from __future__ import annotations

import pytest

from annotator.pipeline.linker import Linker
from bench.naive_reader import naive_linker

TEXTS = [
    "SOCCER - Lyon beat Paris Saint-Germain 2-1 in the French league on Saturday in front of 40,000 fans.",
    "Germany's Angela Merkel met Barack Obama in Berlin.",
]


def test_naive_reader_finds_the_same_mentions(tiny_linker: Linker) -> None:
    naive = naive_linker(tiny_linker)
    for text in TEXTS:
        batched, single = tiny_linker.link(text), naive.link(text)
        assert batched  # γ = 0: the random reader labels spans, so the comparison is not vacuous
        assert [(m.start, m.end, m.uri) for m in single] == [(m.start, m.end, m.uri) for m in batched]
        assert [m.score for m in single] == pytest.approx([m.score for m in batched], abs=1e-5)


def test_naive_reader_agrees_on_given_spans(tiny_linker: Linker) -> None:
    spans = [(0, 6), (15, 20)]
    batched = tiny_linker.link(TEXTS[0], spans)
    single = naive_linker(tiny_linker).link(TEXTS[0], spans)
    assert [(m.start, m.end, m.uri) for m in single] == [(m.start, m.end, m.uri) for m in batched]
