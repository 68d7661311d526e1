"""The documents `entqa link` reads: whole text files, or JSON lines of `{"id", "text", "spans"?}`."""
from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotator.linking import Span

STDIN = "-"
INPUT_FORMATS = ("auto", "text", "jsonl")
JSONL_KEYS = ("id", "text", "spans")


class InputError(ValueError):
    """An input file that cannot be read as the documents it should hold."""


@dataclass(frozen=True)
class InputDocument:
    """One text to link: end to end (A2KB) when `spans` is None, else at these character spans (D2KB)."""

    id: str | int
    text: str
    spans: tuple[Span, ...] | None = None


def read_documents(sources: Sequence[str], input_format: str = "auto") -> list[InputDocument]:
    """The documents of every source in order: a path, or `-` for standard input.

    With `input_format` "auto" a `.jsonl` file holds JSON lines and anything else (standard input too) is one plain
    text document whose id is the path; offsets count code points of the text exactly as stored (no newline
    translation).

    Raises:
        InputError: a missing or non-UTF-8 file, or a JSON line that is not a valid document.
    """
    if input_format not in INPUT_FORMATS:
        raise InputError(f"input format must be one of {', '.join(INPUT_FORMATS)}, got {input_format!r}")
    documents: list[InputDocument] = []
    for source in sources:
        text = _read_text(source)
        is_jsonl = input_format == "jsonl" or input_format == "auto" and source.endswith(".jsonl")
        documents.extend(_jsonl_documents(text, _name(source)) if is_jsonl else [InputDocument(source, text)])
    return documents


def _read_text(source: str) -> str:
    try:
        data = sys.stdin.buffer.read() if source == STDIN else Path(source).read_bytes()
        return data.decode("utf-8")
    except OSError as error:
        raise InputError(f"cannot read {_name(source)}: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise InputError(f"{_name(source)} is not UTF-8 text: {error}") from error


def _name(source: str) -> str:
    return "standard input" if source == STDIN else source


def _jsonl_documents(text: str, name: str) -> list[InputDocument]:
    documents = []
    # Only \n ends a line: JSON strings may hold U+2028 and other breaks that str.splitlines would cut at.
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                documents.append(parse_record(json.loads(line)))
            except (json.JSONDecodeError, InputError) as error:
                raise InputError(f"{name}, line {number}: {error}") from error
    return documents


def parse_record(value: Any) -> InputDocument:
    """One document from its JSON object (or Parquet row): `{"id", "text", "spans"?}`; InputError if invalid."""
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object with the keys {', '.join(JSONL_KEYS)}")
    unknown = sorted(set(value) - set(JSONL_KEYS))
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r}; a document has the keys {', '.join(JSONL_KEYS)} "
                         "(spans optional)")
    identifier, text, spans = value.get("id"), value.get("text"), value.get("spans")
    if not isinstance(identifier, str | int) or isinstance(identifier, bool):
        raise InputError(f"'id' must be a string or an integer, got {identifier!r}")
    if not isinstance(text, str):
        raise InputError(f"'text' must be a string, got {text!r}")
    return InputDocument(identifier, text, None if spans is None else _spans(spans, len(text)))


def _spans(value: Any, length: int) -> tuple[Span, ...]:
    if not isinstance(value, list):
        raise InputError(f"'spans' must be a list of [start, end] pairs, got {value!r}")
    spans = []
    for span in value:
        valid = (isinstance(span, list) and len(span) == 2
                 and all(isinstance(offset, int) and not isinstance(offset, bool) for offset in span))
        if not valid or not 0 <= span[0] < span[1] <= length:
            raise InputError(f"span {span!r} is not [start, end] with 0 <= start < end <= {length} (the text's length "
                             f"in code points)")
        spans.append((span[0], span[1]))
    return tuple(spans)
