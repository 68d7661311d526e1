"""Tests for annotator.model.config.LinkerConfig: per-device batch sizes and environment overrides."""
from __future__ import annotations

from annotator.model.config import LinkerConfig


def test_cpu_batches_stay_small_and_a_gpu_gets_one_big_batch() -> None:
    config = LinkerConfig(reader_batch_size=32, retriever_batch_size=128, gpu_batch_size=4096)
    assert config.batch_sizes("cpu") == (32, 128)
    assert config.batch_sizes("cuda") == (4096, 4096)


def test_the_gpu_batch_is_set_from_the_environment() -> None:
    config = LinkerConfig().with_env(environ={"ENTQA_GPU_BATCH_SIZE": "1024"})
    assert config.batch_sizes("cuda") == (1024, 1024) and config.batch_sizes("cpu") == (32, 128)
