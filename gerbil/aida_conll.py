"""AIDA-CoNLL TSV → documents, with the text built by GERBIL's `AIDACoNLLDataset` token-joining rule."""
from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from annotator.uris import DBPEDIA_RESOURCE, not_in_wiki_uri
from nif.data_types import NifAnnotation, NifDocument

logger = logging.getLogger(__name__)

DOCSTART = "-DOCSTART-"
NOT_IN_WIKI = "--NME--"
WIKIPEDIA_PREFIX = "http://en.wikipedia.org/wiki/"
# GERBIL's AIDA/CoNLL dataset configurations: 1-based document ranges of the full file.
SPLITS: dict[str, tuple[int, int]] = {"train": (1, 946), "a": (947, 1162), "b": (1163, 1393)}

_NO_SPACE_BEFORE = set("?!,)]}.")
_NO_SPACE_AFTER = set("([{")


def join_tokens(tokens: Iterable[str]) -> tuple[str, list[int]]:
    """Joins tokens with GERBIL's whitespace rule.

    A space goes between tokens except: before a single-character `? ! , ) ] } .`; after a
    single-character `( [ {`; after an opening and before a closing single-character `"` (quotes
    alternate, starting with opening); before any longer token whose first character is neither a letter
    nor a digit (`'s`, `--`). The quote state is not touched by a document's first token, as in GERBIL.

    Args:
        tokens: the document's non-empty tokens in order.

    Returns:
        The text and the code-point offset of each token in it.
    """
    parts: list[str] = []
    starts: list[int] = []
    length = 0
    quote_open = False
    space_after = True
    for token in tokens:
        space_before, space_after = space_after, True
        if length > 0:
            if len(token) == 1:
                if token in _NO_SPACE_BEFORE:
                    space_before = False
                elif token == '"':
                    if quote_open:
                        space_before = False
                    else:
                        space_after = False
                    quote_open = not quote_open
                elif token in _NO_SPACE_AFTER:
                    space_after = False
            elif not (token[0].isalpha() or token[0].isdecimal()):  # Java Character.isLetterOrDigit
                space_before = False
            if space_before:
                parts.append(" ")
                length += 1
        starts.append(length)
        parts.append(token)
        length += len(token)
    return "".join(parts), starts


@dataclass
class _Draft:
    tokens: list[str] = field(default_factory=list)
    # (first token index, last token index, uris) per mention
    mentions: list[tuple[int, int, tuple[str, ...]]] = field(default_factory=list)


def _meaning(columns: list[str], uri_prefix: str) -> tuple[str, ...]:
    if columns[3] == NOT_IN_WIKI:
        return (not_in_wiki_uri(uri_prefix, columns[2]),)
    url = columns[4] if len(columns) > 4 else ""
    if not url.startswith(WIKIPEDIA_PREFIX):
        logger.warning("AIDA mention with a URI outside the English Wikipedia: %r", url)
        return (url,) if url else ()
    # WikipediaHelper.generateUriSet: the same title, unchanged, under both prefixes.
    return (url, DBPEDIA_RESOURCE + url[len(WIKIPEDIA_PREFIX):])


def _drafts(lines: Iterable[str], uri_prefix: str) -> list[_Draft]:
    drafts: list[_Draft] = []
    open_mention = False
    for line in lines:
        columns = line.rstrip("\r\n").split("\t")
        if columns[0].startswith(DOCSTART):
            drafts.append(_Draft())
            open_mention = False
            continue
        if not columns[0] or not drafts:
            continue  # sentence breaks add nothing; GERBIL joins sentences with the same rule
        draft = drafts[-1]
        index = len(draft.tokens)
        draft.tokens.append(columns[0])
        tag = columns[1] if len(columns) > 1 else ""
        if tag == "B":
            draft.mentions.append((index, index, _meaning(columns, uri_prefix)))
            open_mention = True
        elif tag and open_mention:
            first, _, uris = draft.mentions[-1]
            draft.mentions[-1] = (first, index, uris)
        elif not tag:
            open_mention = False
    return drafts


def read_documents(lines: Iterable[str], *, uri_prefix: str = "http://aida/", first: int | None = None,
                   last: int | None = None) -> list[NifDocument]:
    """Reads an AIDA-CoNLL TSV file (`AIDA-YAGO2-dataset.tsv` layout) as GERBIL does.

    Documents start at `-DOCSTART-`; tokens are joined with `join_tokens`; a `B` line opens a mention that
    following `I` lines extend; `--NME--` mentions get GERBIL's artificial not-in-KB URI
    `<uri_prefix>notInWiki/<URL-encoded mention>`, linked ones their Wikipedia URL plus the DBpedia URI.

    Args:
        lines: the file's lines.
        uri_prefix: prefix of document URIs (`<prefix><n>`, n counted over the whole file) and NIL URIs.
        first: 1-based number of the first document to keep (with `last`; see `SPLITS`).
        last: 1-based number of the last document to keep, inclusive.

    Returns:
        The documents, offsets in code points.
    """
    documents = []
    for n, draft in enumerate(_drafts(lines, uri_prefix)):
        text, starts = join_tokens(draft.tokens)
        annotations = tuple(
            NifAnnotation(starts[a], starts[b] + len(draft.tokens[b]), uris) for a, b, uris in draft.mentions
        )
        # GERBIL trims the text; only trailing whitespace can occur, which no mention covers.
        documents.append(NifDocument(f"{uri_prefix}{n}", text.rstrip(), annotations))
    if first is not None and last is not None:
        documents = documents[first - 1:last]
    return documents
