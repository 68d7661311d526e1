"""Lower-case titles: a span given to disambiguate (D2KB) that begins in lower case and that the reader answered NIL
takes the KB entry whose title is its text.

A given span is a mention by the task's own word. AIDA annotates names only, so the reader learned to answer
`[CLS]` for a common noun even where its article is among the candidates: on spotlight (New York Times sentences
whose gold is mostly concepts, *car*, *software*) 256 of the shipped linker's 266 wrong D2KB answers were NIL
(docs/results/lower-case-titles-2026-11-29.md). Wikipedia titles a concept's article by the noun itself (*Car*,
*Judge*, *Social support*), so a lower-case span's own title is its likeliest entry ("iPhone" and "the Open
Championship" begin in lower case too). A capitalised span is left
to the reader: a name missing from the KB is what AIDA's NIL answers are, and its title-only namesake is another
bearer of the name (AIDA-A's *Duran*, *Samsung*, *Hong Kong Open*). The span keeps its score, the reader's best on
it; `LinkedSpan.by_title` makes it linked. End to end (A2KB) nothing is given and nothing changes.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.stages import Reading
from annotator.pipeline.title_matches import TitleMatches


@dataclass(frozen=True, eq=False)
class LowerCaseTitles:
    """Lower-case titles as a post-processor. Nothing is read again."""

    matches: TitleMatches  # the KB's titles by text

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            if document.given is not None:
                document.links = lower_case_title_links(document, self.matches, decoding.threshold)


def lower_case_title_links(document: Document, matches: TitleMatches, threshold: float) -> list[LinkedSpan]:
    """The document's links, each NIL one whose text begins in lower case linked to the entry its text titles (the
    described one first, where case alone tells several apart), if there is one."""
    result = []
    for link in document.links:
        text = document.text[link.start:link.end]
        if not link.is_linked(threshold) and text[:1].islower():
            rows = matches.titled(text)
            if rows:
                link = replace(link, entity=rows[0], by_title=True)
        result.append(link)
    return result
