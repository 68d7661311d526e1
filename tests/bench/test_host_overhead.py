"""Tests for bench.host_overhead: no stage of the bench's linker runs a real encoder."""
from __future__ import annotations

from pathlib import Path

from annotator.pipeline.linker import Linker
from bench.host_overhead import RandomPassageTower, RandomReader, with_stand_ins
from tests.conftest import TINY_RUNTIME


def test_every_reading_stage_reads_the_stand_in(tiny_checkpoint: Path, tiny_kb: Path) -> None:
    shipped_stages = {"document_candidates": True, "title_only_look": True}  # the stages that read
    linker = with_stand_ins(Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu", runtime=TINY_RUNTIME,
                                                   config_overrides=shipped_stages), batch_size=64)
    readings = [linker.reading, *(stage.reading for stage in linker.post_processors if hasattr(stage, "reading"))]
    assert len(readings) >= 2  # the title-only look reads with its own reading
    assert all(isinstance(reading.reader, RandomReader) and reading.batch_size == 64 for reading in readings)
    assert isinstance(linker.retrieval.retriever, RandomPassageTower)
    assert linker.link("Ajax Amsterdam signed a striker from Brazil.") is not None
