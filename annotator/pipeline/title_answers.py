"""Title answers: a span given to disambiguate (D2KB) that the reader answered NIL takes the KB entry whose title is its
text, where that entry is likely meant.

A given span is a mention by the task's own word. AIDA annotates names only, so the reader learned to answer `[CLS]`
for a common noun even where its article is among the candidates: on spotlight (New York Times sentences whose gold
is mostly concepts, *car*, *software*) 256 of the shipped linker's 266 wrong D2KB answers were NIL
(docs/results/title-answers-2026-11-29.md). Two cases are answered with the entry titled by the span's text, ignoring
case:

- the span begins in lower case: a concept, whose Wikipedia article the noun itself titles (*Car*, *Judge*, *Social
  support*; "iPhone" begins in lower case too);
- the entry is described and is the reader's own best candidate for the span, only below γ ("Madison, Wisconsin").

A capitalised span whose titled entry the reader did not rank first, or that is title-only, stays NIL: that is
what AIDA's NIL names look like, people and clubs missing from the KB whose namesake is someone else (AIDA-A's
*Samsung*, *Chonan*). The span keeps its score, the reader's best on it; `LinkedSpan.by_title` makes it linked. End to
end (A2KB) nothing is given and nothing changes.
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
class TitleAnswers:
    """Title answers as a post-processor. Nothing is read again."""

    matches: TitleMatches  # the KB's titles by text, and which entries are described

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            if document.given is not None:
                document.links = title_answer_links(document, self.matches, decoding.threshold)


def title_answer_links(document: Document, matches: TitleMatches, threshold: float) -> list[LinkedSpan]:
    """The document's links, each NIL one linked to the entry its text titles where its text begins in lower case
    (the described entry first, where case alone tells several apart), or where that entry is described and is
    the span's best candidate already."""
    result = []
    for link in document.links:
        if not link.is_linked(threshold):
            text = document.text[link.start:link.end]
            titled = matches.titled(text)
            if text[:1].islower() and titled:
                link = replace(link, entity=titled[0], by_title=True)
            elif link.entity in titled and matches.described[link.entity]:
                link = replace(link, by_title=True)
        result.append(link)
    return result
