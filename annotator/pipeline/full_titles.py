"""Full titles: a mention grows to its entity's whole title where the text goes on to spell it out, and a text
that spells a "Place, Region" title around a link is one mention of that title's entry.

The reader learned AIDA's spans, where "Madison, Wisconsin" is two mentions (*Madison, Wisconsin* and
*Wisconsin*); a Wikipedia link, and the benchmarks annotated like one (OKE), take the whole name. When the linked
entity's title is the span's text continued by the characters that follow it in the document ("Madison" linked to
*Madison, Wisconsin*, followed by ", Wisconsin"), the KB itself says the longer text is the entity's name, so the
span takes it and the links inside it go. Where the reader linked a part to another entity, or only the region
("Parkersburg, Iowa" with *Iowa* alone), a text "X, Y" that is exactly a KB title with a link inside it becomes one
mention of that entry. AIDA train annotates 36 of its golds the other way, in 946 documents
(docs/decisions.md#full-titles). Given spans (D2KB) are left as given.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.merging import LinkedSpan, joined
from annotator.pipeline.stages import Reading


@dataclass(frozen=True, eq=False)
class FullTitles:
    """Full titles as a post-processor, end to end only. Nothing is read again."""

    titles: Sequence[str]  # KB titles by row
    comma_titles: Mapping[str, int] = field(init=False)  # the titles "X, Y" → their first row

    def __post_init__(self) -> None:
        rows: dict[str, int] = {}
        for row, title in enumerate(self.titles):
            if ", " in title:
                rows.setdefault(title, row)
        object.__setattr__(self, "comma_titles", rows)

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            if document.given is None:
                links = full_title_links(document.text, document.links, self.titles)
                document.links = comma_title_links(document.text, links, self.comma_titles)


def full_title_links(text: str, links: Sequence[LinkedSpan], titles: Sequence[str]) -> list[LinkedSpan]:
    """`links` with each span extended to its entity's title where `text` continues with the rest of it.

    The title must follow exactly (case included) and end at a word's end; links lying wholly inside the
    extension are dropped, and a link crossing its end blocks it.

    Args:
        text: the document (as the models read it: `links` index it).
        links: its links, without overlaps.
        titles: KB titles by row.

    Returns:
        The links, sorted by position.
    """
    ordered = sorted(links, key=lambda s: (s.start, s.end))
    result: list[LinkedSpan] = []
    covered_to = -1  # the end of the last extended span: links before it were inside one and are gone
    for i, span in enumerate(ordered):
        if span.start < covered_to:
            continue
        title = titles[span.entity]
        end = span.start + len(title)
        inside = [other for other in ordered[i + 1:] if other.start < end]
        if (end > span.end and text[span.start:end] == title and not _inside_a_word(text, end)
                and all(other.end <= end for other in inside)):
            span, covered_to = replace(span, end=end), end
        result.append(span)
    return result


_NAME_WORDS = re.compile(r"(?:[A-Z][^\s,]*)(?: [A-Z][^\s,]*){0,3}$")  # up to 4 capitalised words ending a text
_MAX_REGION_WORDS = 3
_MAX_NAME_CHARACTERS = 120  # how far back the place name is looked for


def comma_title_links(text: str, links: Sequence[LinkedSpan], comma_titles: Mapping[str, int]) -> list[LinkedSpan]:
    """`links` where each text "X, Y" that is a KB title and holds a link becomes one link to that title's entry.

    X is one to four capitalised words before ", ", Y one to three after it (a trailing punctuation mark may end
    the title or not); the longest title wins. The links inside go, the new one takes their best score, and a
    link crossing the text's edges blocks it.

    Args:
        text: the document (as the models read it: `links` index it).
        links: its links, without overlaps.
        comma_titles: the KB titles that hold ", ", each with its row.

    Returns:
        The links, sorted by position.
    """
    result = sorted(links, key=lambda s: (s.start, s.end))
    for comma in re.finditer(", ", text):
        found = _comma_title(text, comma.start(), comma_titles)
        if found is None:
            continue
        result = joined(result, *found) or result
    return result


def _comma_title(text: str, comma: int, comma_titles: Mapping[str, int]) -> tuple[int, int, int] | None:
    """The longest KB title "X, Y" around the ", " at `comma`: its start, end and row."""
    left = _NAME_WORDS.search(text, max(0, comma - _MAX_NAME_CHARACTERS), comma)
    if left is None or _inside_a_word(text, left.start()):
        return None
    starts = [left.start()]
    for word in left.group().split(" ")[:-1]:
        starts.append(starts[-1] + len(word) + 1)
    region = text[comma + 2:].split(" ")[:_MAX_REGION_WORDS]
    for words in range(len(region), 0, -1):
        end = comma + 2 + len(" ".join(region[:words]))
        for end in (end, end - 1):  # a trailing mark in the title, or after it
            if end <= comma + 2 or _inside_a_word(text, end):
                continue
            for start in starts:  # the longest place name first
                row = comma_titles.get(text[start:end])
                if row is not None:
                    return start, end, row
    return None


def _inside_a_word(text: str, end: int) -> bool:
    """Whether `end` cuts a word: the characters on both sides of it are letters or digits."""
    return 0 < end < len(text) and text[end - 1].isalnum() and text[end].isalnum()
