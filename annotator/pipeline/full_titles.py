"""Full titles: a mention grows to its entity's whole title where the text goes on to spell it out.

The reader learned AIDA's spans, where "Madison, Wisconsin" is two mentions (*Madison, Wisconsin* and
*Wisconsin*); a Wikipedia link, and the benchmarks annotated like one (OKE), take the whole name. When the linked
entity's title is the span's text continued by the characters that follow it in the document ("Madison" linked to
*Madison, Wisconsin*, followed by ", Wisconsin"), the KB itself says the longer text is the entity's name, so the
span takes it and the links inside it go. AIDA train annotates 36 of its golds the other way, in 946 documents
(docs/decisions.md#full-titles). Given spans (D2KB) are left as given.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.stages import Reading


@dataclass(frozen=True, eq=False)
class FullTitles:
    """Full titles as a post-processor, end to end only. Nothing is read again."""

    titles: Sequence[str]  # KB titles by row

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            if document.given is None:
                document.links = full_title_links(document.text, document.links, self.titles)


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


def _inside_a_word(text: str, end: int) -> bool:
    """Whether `end` cuts a word: the characters on both sides of it are letters or digits."""
    return 0 < end < len(text) and text[end - 1].isalnum() and text[end].isalnum()
