"""Short names: a surname or short form linked to the entity the document named in full.

News names a person or a club once in full and then by one part ("Randall Cunningham" ... "Cunningham"). When
the reader, shown the entity, still marks no span there (on AIDA-A dev, 126 of its 366 unmarked golds are part of
another mention of their entity, docs/decisions.md#short-names), the document itself has said who is meant. A run of capitalised words
that the linker left open and that equals the first or last words of exactly one linked multi-word mention takes
that mention's entity and score, provided each of its words names the entity: it has three letters or more and
occurs among the entity's title words (`title_words`: no qualifier, no generic words such as "National"), so
that initials ("J."), "I" and a nickname that is not in the title link nothing.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from annotator.pipeline.document import Document
from annotator.pipeline.document_candidates import WORD, open_capitalised_words, title_words
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.stages import Reading

MIN_WORD_LEN = 3


@dataclass(frozen=True, eq=False)
class ShortNames:
    """Short names as a post-processor: end to end, open capitalised runs are added; given spans (D2KB) answered
    NIL may take an entity. Nothing is read again."""

    titles: Sequence[str]  # KB titles by row

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            full = [span for span in document.links if span.is_linked(decoding.threshold)]
            unlinked = (open_name_runs(document.text, document.links) if document.given is None else
                        [(span.start, span.end) for span in document.links if not span.is_linked(decoding.threshold)])
            document.add_links(short_name_links(document.text, unlinked, full, self.titles))


def open_name_runs(text: str, linked: Sequence[LinkedSpan]) -> list[tuple[int, int]]:
    """Maximal runs of capitalised words, joined by single spaces, that start outside every linked span."""
    runs: list[list[tuple[int, int]]] = []
    for word in open_capitalised_words(text, linked):
        if runs and text[runs[-1][-1][1]:word.start()] == " ":
            runs[-1].append(word.span())
        else:
            runs.append([word.span()])
    return [(run[0][0], run[-1][1]) for run in runs]


def short_name_links(text: str, spans: Iterable[tuple[int, int]], linked: Sequence[LinkedSpan],
                     titles: Sequence[str]) -> list[LinkedSpan]:
    """The spans that name, by their first or last words, exactly one entity linked in full in the document.

    Args:
        text: the document.
        spans: character spans that the linker left unlinked (`open_name_runs`, or given spans answered NIL).
        linked: the document's linked mentions.
        titles: KB titles by row.

    Returns:
        One span per matched input span, with the entity and the best score of its full-name mentions.
    """
    full_names: dict[tuple[str, ...], dict[int, float]] = {}
    for span in linked:
        words = _words(text[span.start:span.end])
        if len(words) < 2:
            continue
        for n in range(1, len(words)):
            for part in (words[:n], words[-n:]):
                scores = full_names.setdefault(part, {})
                scores[span.entity] = max(scores.get(span.entity, 0.0), span.score)
    result = []
    for start, end in spans:
        words = _words(text[start:end])
        entities = full_names.get(words, {})
        if len(entities) != 1:
            continue
        (entity, score), = entities.items()
        named_by = title_words(titles[entity])
        if all(len(word) >= MIN_WORD_LEN and word in named_by for word in words):
            result.append(LinkedSpan(start, end, entity, score))
    return result


def _words(surface: str) -> tuple[str, ...]:
    return tuple(word.lower() for word in WORD.findall(surface))
