"""Derczynski IPM NEL (tweets in CoNLL-like columns) → documents, as GERBIL's `DerczynskiDataset` reads them."""
from __future__ import annotations

import re
from collections.abc import Iterable

from annotator.uris import not_in_wiki_uri
from nif.data_types import NifAnnotation, NifDocument

_COLUMNS = re.compile(r"\t+")
_NO_ENTITY = {"O", "NIL", ""}


def _tweet(rows: list[list[str]], uri: str, uri_prefix: str) -> NifDocument:
    """One tweet: tokens each followed by one space (GERBIL keeps the trailing one); a mention per `B-` tag."""
    text = "".join(row[0] + " " for row in rows)
    starts = [0]
    for row in rows:
        starts.append(starts[-1] + len(row[0]) + 1)
    annotations = []
    for i, row in enumerate(rows):
        if len(row) > 2 and row[2].startswith("B-"):
            last = i
            while last + 1 < len(rows) and len(rows[last + 1]) > 2 and rows[last + 1][2].startswith("I-"):
                last += 1
            start, end = starts[i], starts[last + 1] - 1
            link = row[1].strip()
            # GERBIL gives NIL mentions the empty URI, an emerging entity; a not-in-KB URI (as for AIDA's
            # --NME--) scores the same and can be written as NIF.
            meaning = not_in_wiki_uri(uri_prefix, text[start:end]) if link in _NO_ENTITY else link
            annotations.append(NifAnnotation(start, end, (meaning,)))
    return NifDocument(uri, text, tuple(annotations))


def read_documents(lines: Iterable[str], *, uri_prefix: str = "http://derczynski/") -> list[NifDocument]:
    """Reads the IPM NEL file: `token<TAB>URI|O|NIL<TAB>B-type|I-type|O` lines, tweets split by blank lines.

    Args:
        lines: the file's lines.
        uri_prefix: document URIs are `<uri_prefix><n>`, n counting tweets from 0.

    Returns:
        The tweets as documents; a multi-token mention spans its `B-` token and the `I-` tokens after it.
    """
    documents: list[NifDocument] = []
    rows: list[list[str]] = []
    for line in lines:
        line = line.rstrip("\r\n")
        if line.strip():
            rows.append(_COLUMNS.split(line))
            continue
        if rows:
            documents.append(_tweet(rows, f"{uri_prefix}{len(documents)}", uri_prefix))
        rows = []
    if rows:
        documents.append(_tweet(rows, f"{uri_prefix}{len(documents)}", uri_prefix))
    return documents
