"""Short names: a surname or short form linked to the entity the document named in full.

News names a person or a club once in full and then by one part ("Randall Cunningham" ... "Cunningham"). When
the reader, shown the entity, still marks no span there (on AIDA-A dev, 126 of its 366 unmarked golds are part of
another mention of their entity, docs/decisions.md#short-names), the document itself has said who is meant. A run
of capitalised words that the linker left open and that equals the first or last words of exactly one linked
multi-word mention takes that mention's entity and score, provided each of its words names the entity: it has
three letters or more and occurs among the entity's title words (`title_words`: no qualifier, no generic words such
as "National"; accents folded, "Rios" names *Marcelo Ríos*), so that initials ("J."), "I" and a nickname that is
not in the title link nothing.

The same holds where the reader did link the short form, but to another bearer of the name: an entity whose name
holds those words among more ("Henke": *Tom Henke*, where the document named *Nolan Henke* in full), or a title-only
entry of just those words (*Albright* beside "Madeleine Albright"; docs/decisions.md#other-bearers). A short form
linked to a described entity named by exactly those words ("Canada" beside "Statistics Canada", "Washington" as
*Washington, D.C.* beside "Washington State") keeps its link, unless it is the surname of a person the document
named in full, by a given name ("Jordan" as the country beside "Neil Jordan"; `annotator.kb.given_names`), and is
not read as a place ("in Jordan").

An acronym is a short name too: "NLD" after "National League for Democracy", "U.S." after "United States". A word
of three capitals or more, or two or more letters each followed by a dot, left open or given and answered NIL, takes
the one entity linked in the document by a mention whose words begin with its letters, where the entity's title is
so abbreviated too (docs/decisions.md#short-names).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from annotator.kb.titles import without_accents, without_qualifier
from annotator.pipeline.document import Document
from annotator.pipeline.document_candidates import WORD, open_capitalised_words, title_words
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.places import reads_as_place
from annotator.pipeline.stages import Reading

MIN_WORD_LEN = 3
# "NLD", "FOMC", "U.S.", "U.N.": two capitals without dots are too often a word of a capitalised headline ("AS", "IN")
ACRONYM = re.compile(r"(?:[A-Z]\.){2,6}|[A-Z]{3,6}")
# The capitals that begin a name's words (hyphenated parts included): "Agence France-Presse" gives "AFP"
_INITIAL = re.compile(r"(?<![^\W\d_])[A-Z]")


@dataclass(frozen=True, eq=False)
class ShortNames:
    """Short names as a post-processor: end to end, open capitalised runs and acronyms are added, and given spans
    (D2KB) answered NIL may take an entity. Nothing is read again."""

    titles: Sequence[str]  # KB titles by row

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            full = [span for span in document.links if span.is_linked(decoding.threshold)]
            if document.given is None:
                document.add_links(short_name_links(document.text, open_name_runs(document.text, document.links),
                                                    full, self.titles))
                document.add_links(acronym_links(document.text, open_acronyms(document.text, document.links),
                                                 full, self.titles))
            else:
                unlinked = [(span.start, span.end) for span in document.links
                            if not span.is_linked(decoding.threshold)]
                document.add_links(short_name_links(document.text, unlinked, full, self.titles))
                document.add_links(acronym_links(document.text, unlinked, full, self.titles))


def open_name_runs(text: str, linked: Sequence[LinkedSpan]) -> list[tuple[int, int]]:
    """Maximal runs of capitalised words, joined by single spaces, that start outside every linked span."""
    runs: list[list[tuple[int, int]]] = []
    for word in open_capitalised_words(text, linked):
        if runs and text[runs[-1][-1][1]:word.start()] == " ":
            runs[-1].append(word.span())
        else:
            runs.append([word.span()])
    return [(run[0][0], run[-1][1]) for run in runs]


@dataclass(frozen=True, eq=False)
class OtherBearers:
    """Links to another bearer of a name moved to the one the document named in full, as a post-processor. It runs
    after the stages that change a full name's entity (written initials, enclosing names), so that a short form
    follows the full name's last entity: "Bush" beside "George W. Bush" ends as *George W. Bush*."""

    titles: Sequence[str]  # KB titles by row
    described: np.ndarray  # (rows,) bool: whether each entity has a description
    given_names: frozenset[str]  # the first words of people's titles (`annotator.kb.given_names`)

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            full = [span for span in document.links if span.is_linked(decoding.threshold)]
            document.relink(other_bearer_links(document.text, full, self.titles, self.described, self.given_names))


def open_acronyms(text: str, linked: Sequence[LinkedSpan]) -> list[tuple[int, int]]:
    """The words written as an acronym (`ACRONYM`) that start outside every linked span."""
    return [span for span in (_acronym_span(text, word) for word in open_capitalised_words(text, linked))
            if span is not None]


def _acronym_span(text: str, word: re.Match[str]) -> tuple[int, int] | None:
    # `WORD` leaves the last dot of "U.S." out; the acronym takes it
    for end in (min(word.end() + 1, len(text)), word.end()):
        if ACRONYM.fullmatch(text, word.start(), end):
            return word.start(), end
    return None


def acronym_links(text: str, spans: Iterable[tuple[int, int]], linked: Sequence[LinkedSpan],
                  titles: Sequence[str]) -> list[LinkedSpan]:
    """The spans written as an acronym of exactly one entity linked in the document by its words: the capitals
    that begin the words of one of its mentions, and of its title ("National League for Democracy" for "NLD").

    Args:
        text: the document.
        spans: character spans that the linker left unlinked (`open_acronyms`, or given spans answered NIL).
        linked: the document's linked mentions.
        titles: KB titles by row.

    Returns:
        One span per matched input span, with the entity and the best score of its written-out mentions.
    """
    written_out: dict[str, dict[int, float]] = {}
    for span in linked:
        letters = _initials(text[span.start:span.end])
        if len(letters) >= 2 and _initials(without_qualifier(titles[span.entity])) == letters:
            scores = written_out.setdefault(letters, {})
            scores[span.entity] = max(scores.get(span.entity, 0.0), span.score)
    result = []
    for start, end in spans:
        surface = text[start:end]
        entities = written_out.get(surface.replace(".", ""), {}) if ACRONYM.fullmatch(surface) else {}
        if len(entities) == 1:
            (entity, score), = entities.items()
            result.append(LinkedSpan(start, end, entity, score))
    return result


def _initials(name: str) -> str:
    return "".join(_INITIAL.findall(name))


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
    full_names = _full_names(text, linked)
    result = []
    for start, end in spans:
        named = _named_in_full(_words(text[start:end]), full_names, titles)
        if named is not None:
            result.append(LinkedSpan(start, end, *named))
    return result


def other_bearer_links(text: str, linked: Sequence[LinkedSpan], titles: Sequence[str], described: np.ndarray,
                       given_names: frozenset[str]) -> list[LinkedSpan]:
    """The linked spans that name, by their first or last words, exactly one other entity linked in full in the
    document, while their own entity is another bearer of those words: its name (the title without qualifier and
    without a part after a comma) holds them among more words, or it is a title-only entry named by just them. Or
    whatever their entity, where they are the surname of a person named in full (`_surnames`), unless read as a
    place.

    Returns:
        Each such span with the entity and the best score of the full-name mentions.
    """
    full_names = _full_names(text, linked)
    surnames = _surnames(text, linked, given_names)
    result = []
    for span in linked:
        words = _words(text[span.start:span.end])
        named = _named_in_full(words, full_names, titles)
        if named is not None and named[0] != span.entity and (
                _another_bearer(words, span.entity, titles, described)
                or (named[0] in surnames.get(words, ()) and not reads_as_place(text, span.start))):
            result.append(LinkedSpan(span.start, span.end, *named))
    return result


def _surnames(text: str, linked: Sequence[LinkedSpan], given_names: frozenset[str]) -> dict[tuple[str, ...], set[int]]:
    """The last word of each linked mention that is a person's name, two or three capitalised words the first of
    which is a given name ("Neil Jordan") → the entities so named."""
    surnames: dict[tuple[str, ...], set[int]] = {}
    for span in linked:
        words = WORD.findall(text[span.start:span.end])
        if 2 <= len(words) <= 3 and all(word[:1].isupper() for word in words) and words[0] in given_names:
            surnames.setdefault((_folded(words[-1]),), set()).add(span.entity)
    return surnames


def _full_names(text: str, linked: Sequence[LinkedSpan]) -> dict[tuple[str, ...], dict[int, float]]:
    """The first and last words of each linked multi-word mention → the entities so named, with their best score."""
    full_names: dict[tuple[str, ...], dict[int, float]] = {}
    for span in linked:
        words = _words(text[span.start:span.end])
        for n in range(1, len(words)):
            for part in (words[:n], words[-n:]):
                scores = full_names.setdefault(part, {})
                scores[span.entity] = max(scores.get(span.entity, 0.0), span.score)
    return full_names


def _named_in_full(words: tuple[str, ...], full_names: dict[tuple[str, ...], dict[int, float]],
                   titles: Sequence[str]) -> tuple[int, float] | None:
    """The one entity whose full-name mentions `words` begin or end, with its score, where each word names it."""
    entities = full_names.get(words, {})
    if len(entities) != 1:
        return None
    (entity, score), = entities.items()
    named_by = _title_words(titles[entity])
    return (entity, score) if all(len(word) >= MIN_WORD_LEN and word in named_by for word in words) else None


def _another_bearer(words: tuple[str, ...], row: int, titles: Sequence[str], described: np.ndarray) -> bool:
    """Whether entity `row` bears the name `words` among others: its name holds them among more words, or it is a
    title-only entry of just them. The name is the title without a part after a comma: *Washington, D.C.* is named
    "Washington"."""
    name = _title_words(titles[row].split(", ")[0])
    return set(words) < name or (not described[row] and set(words) == name)


def _title_words(title: str) -> frozenset[str]:
    return frozenset(_folded(word) for word in title_words(title))


def _words(surface: str) -> tuple[str, ...]:
    return tuple(_folded(word) for word in WORD.findall(surface))


def _folded(word: str) -> str:
    """Lower case without accents: news often writes "Rios" for *Marcelo Ríos*."""
    return without_accents(word).lower()
