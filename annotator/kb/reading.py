"""Reading knowledge bases in the shared, BLINK and KILT JSON-lines formats."""
from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from annotator.data_types import Entity
from annotator.errors import KBFormatError

# A KILT page holds the whole article; 128 wordpieces never need more than a few paragraphs.
MAX_DESCRIPTION_CHARS = 2000
_SAMPLE_BYTES = 16 * 2**20

_EXPECTED_KEYS = ('{"title", "text", "qid"} (shared KB), {"title", "text", "entity"} (BLINK entity.jsonl) '
                  'or {"wikipedia_title", "text": [paragraphs]} (KILT knowledge source)')


def read_kb(path: str | Path) -> Iterator[Entity]:
    """The entities of a `.jsonl` or `.jsonl.gz` KB, in file order.

    Each line's format is recognised from its keys: the shared KB `{title, text, qid}`, BLINK's
    `{title, text, entity, ...}` or KILT's `{wikipedia_title, text: [paragraphs], wikidata_info, ...}`.

    Raises:
        KBFormatError: a line is not JSON or has none of the expected key sets.
    """
    path = Path(path)
    with open_kb_text(path) as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise KBFormatError(f"{path}:{number}: not a JSON object ({exc.msg})") from exc
            yield entity_from_record(record, path=path, number=number)


def kb_fingerprint(path: str | Path) -> str:
    """A cheap identity of a KB file: sha256 over its size, first and last 16 MiB (stable across copies)."""
    path = Path(path)
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(_SAMPLE_BYTES))
        if size > _SAMPLE_BYTES:
            handle.seek(max(size - _SAMPLE_BYTES, _SAMPLE_BYTES))
            digest.update(handle.read())
    return digest.hexdigest()


def open_kb_text(path: Path) -> IO[str]:
    """A `.jsonl` or `.jsonl.gz` file opened as UTF-8 text (a byte that is not UTF-8 raises UnicodeDecodeError)."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def entity_from_record(record: Any, *, path: Path, number: int) -> Entity:
    """The entity of one parsed KB line, in any of the formats `read_kb` reads.

    Raises:
        KBFormatError: naming `path` and line `number`, the record is in none of them.
    """
    if isinstance(record, Mapping):
        for matches, parse in _FORMATS:
            if matches(record):
                return parse(record)
    keys = sorted(record) if isinstance(record, Mapping) else type(record).__name__
    raise KBFormatError(f"{path}:{number}: unknown KB record with keys {keys}; expected {_EXPECTED_KEYS}")


def _parse_kilt(record: Mapping[str, Any]) -> Entity:
    title = record["wikipedia_title"].strip()
    paragraphs = [p.strip() for p in record["text"]]
    # KILT's first paragraph repeats the title.
    if paragraphs and paragraphs[0] == title:
        paragraphs = paragraphs[1:]
    # Section headings ("Section::::History.") are markup, not description.
    description = " ".join(p for p in paragraphs if p and not p.startswith("Section::::"))[:MAX_DESCRIPTION_CHARS]
    qid = (record.get("wikidata_info") or {}).get("wikidata_id")
    return Entity(title, description, qid)


def _parse_title_text(record: Mapping[str, Any]) -> Entity:
    return Entity(record["title"].strip(), (record.get("text") or "").strip(), record.get("qid"))


_FORMATS: tuple[tuple[Callable[[Mapping[str, Any]], bool], Callable[[Mapping[str, Any]], Entity]], ...] = (
    (lambda r: isinstance(r.get("wikipedia_title"), str) and isinstance(r.get("text"), list), _parse_kilt),
    (lambda r: isinstance(r.get("title"), str) and isinstance(r.get("text", ""), str | None), _parse_title_text),
)
