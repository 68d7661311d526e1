"""The shipped everyday-text KB (models/entqa-minilm/kb) holds everyday names and matches its shipped index."""
from __future__ import annotations

import json

import pytest

from annotator import DEFAULT_MODEL_DIR
from annotator.entity_index import MANIFEST
from annotator.kb.reading import kb_fingerprint, read_kb

pytestmark = pytest.mark.slow  # reads the shipped 100k-entity KB

KB = DEFAULT_MODEL_DIR / "kb" / "entities.jsonl.gz"
INDEX = DEFAULT_MODEL_DIR / "index"


def test_everyday_names_are_in_the_shipped_kb() -> None:
    titles = {entity.title for entity in read_kb(KB)}
    # Absent from the earlier 13.5k demo KB. The development KB spells HSBC's article "HSBC Holdings".
    assert {"European Union", "São Paulo", "Reykjavík", "Bank of England", "HSBC Holdings"} <= titles
    assert {"Bill Clinton", "Nelson Mandela", "Pretoria"} <= titles  # the README's example
    assert len(titles) > 90_000


def test_the_shipped_index_is_the_shipped_kb_s() -> None:
    manifest = json.loads((INDEX / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["complete"] and manifest["identity"]["kb_fingerprint"] == kb_fingerprint(KB)
    titles = (INDEX / "titles.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert titles == [entity.title for entity in read_kb(KB)] and manifest["rows"] == len(titles)
