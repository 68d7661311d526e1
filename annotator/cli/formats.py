"""What `entqa link` prints: each document's mentions as TSV, JSON, JSON lines or NIF Turtle."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from annotator.cli.documents import InputDocument
from annotator.data_types import Mention
from nif import NifDocument, annotations_from_mentions, write_document

# NIF needs a URI per document: this placeholder base (RFC 2606) with the document's id.
NIF_DOCUMENT_BASE = "http://example.org/entqa/"
TSV_COLUMNS = ("id", "start", "end", "surface", "title", "uri", "score")

# A mention's keys in the JSON formats (its KB description is left to the web API, where a page shows it).
JSON_KEYS = ("start", "end", "surface", "title", "uri", "score")

Writer = Callable[[Sequence[InputDocument], Sequence[Sequence[Mention]]], str]


def tsv(documents: Sequence[InputDocument], mentions: Sequence[Sequence[Mention]]) -> str:
    """A header, then one row per mention; a NIL mention (D2KB) has an empty title."""
    out = io.StringIO()
    rows = csv.writer(out, delimiter="\t", lineterminator="\n")  # quotes only a surface holding a tab or newline
    rows.writerow(TSV_COLUMNS)
    for document, found in zip(documents, mentions):
        rows.writerows([document.id, m.start, m.end, m.surface, m.title or "", m.uri, f"{m.score:.4f}"] for m in found)
    return out.getvalue()


def json_array(documents: Sequence[InputDocument], mentions: Sequence[Sequence[Mention]]) -> str:
    """One JSON array of `{"id", "mentions": [{start, end, surface, title, uri, score}, ...]}`."""
    return json.dumps([_record(d, m) for d, m in zip(documents, mentions)], ensure_ascii=False, indent=2) + "\n"


def json_lines(documents: Sequence[InputDocument], mentions: Sequence[Sequence[Mention]]) -> str:
    """The JSON format's objects, one per line."""
    return "".join(json.dumps(_record(d, m), ensure_ascii=False) + "\n" for d, m in zip(documents, mentions))


def nif(documents: Sequence[InputDocument], mentions: Sequence[Sequence[Mention]]) -> str:
    """Each document as a NIF context with one `nif:Phrase` per span, its scores as `itsrdf:taConfidence`."""
    return "".join(write_document(_nif_document(d, m), with_confidence=True) for d, m in zip(documents, mentions))


OUTPUT_FORMATS: dict[str, Writer] = {"tsv": tsv, "json": json_array, "jsonl": json_lines, "nif": nif}


def _record(document: InputDocument, mentions: Sequence[Mention]) -> dict[str, Any]:
    return {"id": document.id, "mentions": [{key: getattr(mention, key) for key in JSON_KEYS} for mention in mentions]}


def _nif_document(document: InputDocument, mentions: Sequence[Mention]) -> NifDocument:
    uri = f"{NIF_DOCUMENT_BASE}{quote(str(document.id), safe='')}#char=0,{len(document.text)}"
    return NifDocument(uri, document.text, annotations_from_mentions(mentions))
