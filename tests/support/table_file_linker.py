"""A test linker over a KB file it can reload: DictionaryLinker whose table is a JSON file (tests only)."""
from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from annotator.errors import KBFormatError
from tests.support.dictionary_linker import DictionaryLinker


class TableFileLinker(DictionaryLinker):
    """Links the surfaces of the JSON object {surface: title} in `path`, as it was when built; `reloaded()` reads the
    file again (a `ReloadableLinker`), and can be held (`hold`) to stand for a slow KB load."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        content = self.path.read_bytes()
        try:
            table = json.loads(content)
        except ValueError as error:
            raise KBFormatError(f"{self.path} is not a JSON table: {error}") from error
        super().__init__(table)
        self.digest = hashlib.sha256(content).hexdigest()[:12]
        self.reloaded_on: int | None = None  # the thread that built it, when `reloaded()` did
        self.hold = threading.Event()
        self.hold.set()

    def reloaded(self) -> TableFileLinker:
        assert self.hold.wait(timeout=30), "the reload was held for too long"
        linker = TableFileLinker(self.path)
        linker.reloaded_on = threading.get_ident()
        return linker

    def describe(self) -> dict[str, str | int | float]:
        return {"model": "table-file-test-linker", "kb": str(self.path), "entities": len(self.table),
                "kb_changes": self.digest, "process": os.getpid()}


def write_table(path: Path, table: dict[str, str]) -> Path:
    """Writes `table` to `path` as TableFileLinker reads it, replacing the file at once (as a KB tool would)."""
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(table), encoding="utf-8")
    part.replace(path)
    return path
