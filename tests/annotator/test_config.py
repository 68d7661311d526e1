"""Tests for the model config (annotator.model.config), the host's settings (annotator.runtime.settings) and the
settings given by name (annotator.settings): defaults, presets, per-device batches, parsing and its errors."""
from __future__ import annotations

import json

import pytest

from annotator import DEFAULT_MODEL_DIR
from annotator.errors import ConfigError
from annotator.model.config import LinkerConfig
from annotator.runtime.settings import RuntimeSettings
from annotator.settings import LinkerSettings, settings_from_variables


def test_the_defaults_are_the_shipped_checkpoints_config() -> None:
    saved = json.loads((DEFAULT_MODEL_DIR / "config.json").read_text(encoding="utf-8"))
    assert LinkerConfig.from_dict(saved) == LinkerConfig() and saved == LinkerConfig().to_dict()


def test_the_paper_preset_is_the_papers_setup() -> None:
    paper = LinkerConfig.paper()
    assert (paper.top_k, paper.threshold, paper.max_entity_len, paper.top_spans) == (100, 0.05, 128, 3)
    assert not (paper.document_candidates or paper.short_names or paper.mention_candidates or paper.title_candidates
                or paper.title_only_look or paper.full_titles or paper.written_initials or paper.title_answers
                or paper.national_teams or paper.spelling_variants or paper.shared_embeddings)


def test_a_config_rejects_unknown_keys_naming_the_valid_ones_and_the_hosts_settings() -> None:
    with pytest.raises(ConfigError, match=r"unknown config keys \['merge'\]; valid keys: \['add_topic', "):
        LinkerConfig.from_dict({"merge": "paper"})
    with pytest.raises(ConfigError, match=r"the host's settings \['cpu_precision'\] are annotator.runtime.settings"):
        LinkerConfig.from_dict({"cpu_precision": "auto"})


def test_cpu_batches_stay_small_and_a_gpu_gets_one_big_batch() -> None:
    runtime = RuntimeSettings()
    assert runtime.batch_sizes("cpu") == (32, 128)
    assert runtime.batch_sizes("cuda") == (4096, 4096)


def test_settings_come_from_their_variables_split_between_the_model_and_the_host() -> None:
    settings = settings_from_variables({"ENTQA_TOP_K": "20", "ENTQA_SHORT_NAMES": "false", "ENTQA_THRESHOLD": "0",
                                        "ENTQA_GPU_BATCH_SIZE": "1024", "ENTQA_CPU_PRECISION": "fp32",
                                        "ENTQA_BIND": "0.0.0.0:8080", "PATH": "/bin"})
    assert settings == LinkerSettings(model={"top_k": 20, "short_names": False, "threshold": 0.0},
                                      runtime=RuntimeSettings(cpu_precision="fp32", gpu_batch_size=1024))
    assert settings.runtime.batch_sizes("cuda") == (1024, 1024) and settings.runtime.batch_sizes("cpu") == (32, 128)
    assert settings_from_variables({}) == LinkerSettings()


def test_assignments_override_the_variables_and_unknown_names_are_refused() -> None:
    settings = settings_from_variables({"ENTQA_TOP_K": "20"}, assignments=["top_k=8", "cpu_precision=\"bf16\""])
    assert settings.model == {"top_k": 8} and settings.runtime.cpu_precision == "bf16"
    with pytest.raises(ConfigError, match=r"unknown setting 'pooling'; valid: \['add_topic', "):
        settings_from_variables({}, assignments=["pooling=cls"])
    with pytest.raises(ConfigError, match="expected NAME=VALUE, got 'top_k'"):
        settings_from_variables({}, assignments=["top_k"])


@pytest.mark.parametrize(("variables", "error"), [
    ({"ENTQA_CPU_PRECISION": "fp16"}, "ENTQA_CPU_PRECISION: Input should be 'auto', 'bf16', 'int8' or 'fp32', "
                                      "got 'fp16'"),
    ({"ENTQA_INDEX_TYPE": "ivfpq"}, "ENTQA_INDEX_TYPE: Input should be 'flat' or 'hnsw', got 'ivfpq'"),
    ({"ENTQA_TOP_K": "many"}, "ENTQA_TOP_K: Input should be a valid integer"),
    ({"ENTQA_READER_BATCH_SIZE": "0"}, r"reader_batch_size must be 1 or more, got 0 \(ENTQA_READER_BATCH_SIZE\)"),
])
def test_a_value_its_field_cannot_take_is_named_with_the_valid_choices(variables: dict[str, str],
                                                                      error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        settings_from_variables(variables)
