"""A deterministic test linker: links exact surface strings from a fixed table (tests only)."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from annotator.data_types import Mention
from annotator.uris import dbpedia_uri

DEFAULT_TABLE = {"Ada Lovelace": "Ada Lovelace", "Babbage": "Charles Babbage", "London": "London",
                 "Zürich": "Zürich", "東京": "Tokyo", "Paris": "Paris"}


class DictionaryLinker:
    """Links every occurrence of a table key; in D2KB mode, each given span whose text is a key."""

    def __init__(self, table: Mapping[str, str] = DEFAULT_TABLE, *, score: float = 0.9) -> None:
        self.table = dict(table)
        self.score = score
        self._pattern = re.compile("|".join(re.escape(k) for k in sorted(self.table, key=len, reverse=True)))

    def _mention(self, text: str, start: int, end: int) -> Mention:
        title = self.table[text[start:end]]
        return Mention(start, end, text[start:end], title, dbpedia_uri(title), self.score)

    def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
        if spans is None:
            return [self._mention(text, m.start(), m.end()) for m in self._pattern.finditer(text)]
        return [self._mention(text, s, e) for s, e in spans if text[s:e] in self.table]

    def describe(self) -> dict[str, str]:
        return {"model": "dictionary-test-linker", "kb": f"{len(self.table)} test entries"}
