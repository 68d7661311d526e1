"""The service's batching settings (ENTQA_BATCH_*): read from the environment, refused at start when out of range."""
from __future__ import annotations

import pytest

from tests.support.dictionary_linker import DictionaryLinker
from annotator.service import create_app

SETTINGS = r"\(ENTQA_BATCH_DOCUMENTS, ENTQA_BATCH_CHARACTERS, ENTQA_BATCH_WAIT_MS\)"


@pytest.mark.parametrize(("name", "value", "message"), [
    ("ENTQA_BATCH_DOCUMENTS", "0", r"batch documents must be an integer of 1 or more \(1: batching off\), got 0"),
    ("ENTQA_BATCH_CHARACTERS", "0", "batch characters must be an integer of 1 or more, or null for no bound, got 0"),
    ("ENTQA_BATCH_WAIT_MS", "-5", "batch wait must be 0 or more milliseconds, got -5"),
])
def test_a_batching_setting_out_of_range_stops_the_start_naming_the_settings(
        monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=f"{message} {SETTINGS}"):
        create_app(linker=DictionaryLinker())


def test_the_batching_settings_in_range_start_the_service(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in (("ENTQA_BATCH_DOCUMENTS", "1"), ("ENTQA_BATCH_CHARACTERS", "null"),
                        ("ENTQA_BATCH_WAIT_MS", "2.5")):
        monkeypatch.setenv(name, value)
    assert create_app(linker=DictionaryLinker()).test_client().get("/health").status_code == 200
