"""Enclosing names: a link inside a longer name that a described KB entry is titled by becomes a link to that entry.

The reader marks the part of a name it knows: *Canada* in "Air Canada", *London* in "Transport for London", *United
States* in "Vice President of the United States". The retriever, reading the whole passage, often does not propose
the longer entity at all. Where the words around a link make, with it, exactly the title of a described KB entry
(case included; up to four words on each side, each capitalised or a linking word such as "of"), the KB itself says
the longer text names one thing: the span takes it, and the links inside it go. Title-only entries are left out,
since half of them are titles sampled for their words alone (docs/decisions.md#enclosing-names). End to end only:
given spans (D2KB) are left as given.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.merging import LinkedSpan, joined
from annotator.pipeline.stages import Reading
from annotator.pipeline.title_matches import TitleMatches

_MAX_WORDS = 4  # words added on each side
_WORD = re.compile(r"\S+")
_OPENING = "\"'“‘(["  # marks a name's first word may follow
_CLOSING = ".,;:!?\"'”’)]"  # marks its last word may precede
_POSSESSIVE = ("'s", "’s")
# Lower-case words inside a name ("Transport for London", "University of Illinois at Chicago").
_LINKING_WORDS = frozenset({"of", "for", "at", "the", "and", "on", "in", "upon", "de", "del", "la", "le", "van",
                            "von", "der", "da", "di", "&"})


@dataclass(frozen=True, eq=False)
class EnclosingNames:
    """Enclosing names as a post-processor, end to end only. Nothing is read again."""

    matches: TitleMatches  # the KB's titles by text, and which entries are described

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            if document.given is None:
                document.links = enclosing_name_links(document.text, document.links, self.matches)


def enclosing_name_links(text: str, links: Sequence[LinkedSpan], matches: TitleMatches) -> list[LinkedSpan]:
    """`links` where each link inside a longer name that a described entry's title spells becomes a link to it.

    The longest such name wins; the links inside it go, the new one takes their best score, and a link crossing
    its edges blocks it.

    Args:
        text: the document (as the models read it: `links` index it).
        links: its links, without overlaps.
        matches: the KB's titles.

    Returns:
        The links, sorted by position.
    """
    result = sorted(links, key=lambda s: (s.start, s.end))
    for link in list(result):
        if link not in result:  # inside a name found before
            continue
        found = _enclosing_name(text, link, matches)
        if found is not None:
            result = joined(result, *found) or result
    return result


def _enclosing_name(text: str, link: LinkedSpan, matches: TitleMatches) -> tuple[int, int, int] | None:
    """The longest name around `link` that a described entry's title spells exactly: its start, end and row."""
    before = list(_WORD.finditer(text, max(0, link.start - 200), link.start))[-_MAX_WORDS:]
    after = list(_WORD.finditer(text, link.end, link.end + 200))[:_MAX_WORDS]
    starts = [link.start] + [word.start() + _leading_marks(word.group()) for word in before]
    ends = [link.end] + [end for word in after for end in _word_ends(word)]
    best = None
    for start in starts:
        for end in ends:
            if (start, end) == (link.start, link.end) or end <= start:
                continue
            name = text[start:end]
            if len(name.split(" ")) <= len(text[link.start:link.end].split(" ")) or not _is_name(name):
                continue
            if best is not None and end - start <= best[1] - best[0]:
                continue
            row = next((row for row in matches.titled(name)
                        if matches.titles[row] == name and matches.described[row]), None)
            if row is not None:
                best = (start, end, row)
    return best


def _leading_marks(word: str) -> int:
    return len(word) - len(word.lstrip(_OPENING))


def _word_ends(word: re.Match[str]) -> list[int]:
    """Where a name may end in `word`: after it, before its closing marks, before a possessive."""
    unmarked = word.group().rstrip(_CLOSING)
    bare = unmarked
    for possessive in _POSSESSIVE:
        bare = bare.removesuffix(possessive)
    return sorted({word.end(), word.start() + len(unmarked), word.start() + len(bare)})


def _is_name(text: str) -> bool:
    """Whether `text` reads as a name: words separated by single spaces, the first and last capitalised (or a
    number), those between capitalised or linking words."""
    words = text.split(" ")
    return all(words) and all(_capitalised(word) or (0 < i < len(words) - 1 and word in _LINKING_WORDS)
                              for i, word in enumerate(words))


def _capitalised(word: str) -> bool:
    return word[0].isupper() or word[0].isdigit()
