"""Training passages from the KB's own descriptions, with gold mentions found without labels (issue 45).

AIDA train is one month of 1996 Reuters news; the KB's descriptions are today's world in other domains, and their
mentions can be found without labels:

- **The subject.** A description that begins with its entity's name is labelled there (and wherever that name
  recurs, not inside a longer capitalised name) as its entity. The name is the first of these forms of the title
  that the description starts with, possibly after "The ", followed by neither a letter, digit or hyphen nor a
  capitalised word: the title (*Lionel Messi*); the title without a trailing parenthesised qualifier (*Lovelace*
  for *Lovelace (film)*); the part before the title's one comma (*Tampico* for *Tampico, Illinois*); and, for
  a name of two words or more, the same with one or two capitalised middle names after its first word (*Penn
  Dayton Badgley* for *Penn Badgley*). "The" stays outside the mention, as in AIDA (*the Cincinnati Bengals*).
  Its short forms are labelled too wherever they recur, as AIDA labels "Messi" after "Lionel Messi" (unlabelled,
  a passage that names its subject only so would teach the reader that the name means nothing): a person's
  surname, the last word of a name of two words or more in a description with a personal pronoun
  (*Badgley* for *Penn Badgley*); and an acronym in brackets right after the name (*NFL* in "The National
  Football League (NFL) is ...").
  Its own description is the passage, so the subject is shown title-only in its passages
  (`TrainingPassage.title_only_rows`); where its name was not found, it is kept out of the passage's negatives
  (`unlabelled_rows`) instead, since the passage is still about it.
- **Other entities** (docs/decisions.md#kb-description-passages): any KB title that occurs verbatim as whole
  words, the longest match winning among overlapping ones, if the title is capitalised, is no date (*February
  10*, *March 1996*) and no disambiguation entry (*"... may refer to"*), and the occurrence is not part of a
  longer capitalised name (*Chicago* in *Nueva Chicago*: a capitalised word next to it, unless that word starts
  the sentence). A single-word title must also have a description and must not start a sentence (*Apple* in
  "Apple trees ...").
  Occurrences that these rules reject stay unlabelled and out of the negatives (`unlabelled_rows`).
- **Common nouns** are labelled nowhere, the subject included: an entity whose own description writes its name
  (the title without its qualifier) in lower case is a thing or a role (*Senate*, *King*, *Cheese*, *Country
  music*), not a name, and AIDA annotates names only. The reader's wordpieces are uncased, so a label on
  "the Senate" teaches it to link "senate" anywhere: 187 of the 2,282 labels of the mix's 468 descriptions were
  such (2026-11-28). Their occurrences stay out of the negatives too.

Descriptions of dates and disambiguation entries are not used.
"""
from __future__ import annotations

import logging
import random
import re
import time
from dataclasses import dataclass, replace
from typing import NamedTuple

import ahocorasick

from annotator.kb.titles import without_qualifier
from annotator.model.tokenization import InputBuilder
from annotator.training.data import GoldLink, KnowledgeBase, TrainingDocument, cut_passages, wordpiece_span

logger = logging.getLogger(__name__)

MIN_DESCRIPTION_CHARS = 200  # shorter descriptions are mostly one line about a title-like entity
DESCRIPTION_URI = "kb-description:"  # + the title: the documents' URIs, so logs can tell them from AIDA's

_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_DATE_TITLE = re.compile(rf"(?:\d{{1,2}} )?{_MONTH}(?: \d{{1,2}})?(?:,? \d{{1,4}})?")
_DISAMBIGUATION = re.compile(r"\b(?:may|might|can|could) (?:also )?refer to\b|\brefers to\b")
_OPENERS = " \t\n\"'([“‘"  # what may stand between a sentence's end and its first word
_PERSONAL = re.compile(r"\b(?:[Hh]e|[Ss]he|[Hh]is|[Hh]er)\b")
_SURNAME = re.compile(r"[A-Z][\w'’-]{2,}")
_GENERATIONS = frozenset({"Jr", "Sr", "II", "III", "IV"})
_ACRONYM = re.compile(r" ?\(([A-Z][A-Za-z0-9&.-]{1,9})[);,]")


def is_date_title(title: str) -> bool:
    """Whether a title names a date or a month (*February 10*, *10 February*, *March 1996*, *May*)."""
    return _DATE_TITLE.fullmatch(title) is not None


def is_disambiguation(text: str) -> bool:
    """Whether a description is a disambiguation entry's (*"Russian refers to ..."*, *"... may refer to"*)."""
    return _DISAMBIGUATION.search(text[:300]) is not None


def subject_names(title: str) -> list[str]:
    """The forms of a title that a description may begin with, longest first: the title, the title without a
    trailing parenthesised qualifier, the part before its comma if it has one (a place's region: *Tampico,
    Illinois*; not a list: *Friends of the Global Fight Against AIDS, Tuberculosis, and Malaria*)."""
    names = [title, re.sub(r"\s*\([^()]*\)$", "", title), title.split(",")[0] if title.count(",") == 1 else title]
    return [name for name in dict.fromkeys(n.strip() for n in names) if name]


def subject_short_forms(text: str, subject: tuple[int, int]) -> list[str]:
    """The subject's short forms that `text`, its description, allows (see the module's docstring): the surname of
    a person's name of two words or more, and an acronym in brackets right after the name."""
    name = text[slice(*subject)]
    forms = []
    words = name.split(",")[0].split()  # *Muriel Turner, Baroness Turner of Camden*: Turner
    if len(words) >= 2 and _SURNAME.fullmatch(words[-1]) and words[-1].rstrip(".") not in _GENERATIONS \
            and _PERSONAL.search(text):
        forms.append(words[-1])
    acronym = _ACRONYM.match(text, subject[1])
    if acronym and sum(c.isupper() for c in acronym.group(1)) >= 2:
        forms.append(acronym.group(1))
    return forms


def with_middle_names(text: str, start: int, name: str) -> int | None:
    """Where `name` of two words or more ends in `text` read from `start` with one or two capitalised middle names
    after its first word (*Penn Dayton Badgley* for *Penn Badgley*), or None."""
    first, _, rest = name.partition(" ")
    if not rest or not text.startswith(first + " ", start):
        return None
    position = start + len(first) + 1
    for _ in range(2):
        end = text.find(" ", position)
        word = text[position:end]
        if end < 0 or not word[:1].isupper() or not all(c.isalnum() or c in ".'’-" for c in word):
            return None
        position = end + 1
        if text.startswith(rest, position):
            return position + len(rest)
    return None


def ends_word(text: str, end: int) -> bool:
    """Whether position `end` ends a word: no letter, digit or hyphen follows (*Chicago-based* is no mention)."""
    return end == len(text) or not (text[end].isalnum() or text[end] == "-")


def starts_word(text: str, start: int) -> bool:
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "-")


def starts_sentence(text: str, start: int) -> bool:
    """Whether a sentence or a line starts at `start`: nothing but a sentence's end, spaces and opening quotes or
    brackets before it."""
    i = start
    while i > 0 and text[i - 1] in _OPENERS:
        i -= 1
    return i == 0 or "\n" in text[i:start] or (i < start and text[i - 1] in ".!?")


def in_longer_name(text: str, start: int, end: int) -> bool:
    """Whether the span is part of a longer capitalised name: a capitalised word right after it or right before
    it, separated by spaces only, unless the word before starts its sentence (*In Paris* is Paris)."""
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if end < after < len(text) and text[after].isupper():
        return True
    before = start
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    if before == start or before == 0 or not text[before - 1].isalnum():  # none, or it ends with punctuation
        return False
    word = before
    while word > 0 and not text[word - 1].isspace():
        word -= 1
    return text[word].isupper() and not starts_sentence(text, word)


class Occurrence(NamedTuple):
    """A whole-word occurrence of a name in a description."""

    start: int
    end: int
    row: int  # the KB entity it names
    is_subject: bool  # the described entity's own name, which is certain


@dataclass(frozen=True)
class FoundMentions:
    """The mentions found in one description, in character offsets."""

    labelled: tuple[tuple[int, int, int], ...]  # (start, end, KB row), in text order
    unlabelled_rows: frozenset[int]  # entities named by occurrences the rules rejected
    subject_labelled: bool  # whether the described entity itself is among the labelled


class DescriptionMentions:
    """Finds the mentions of KB entities in KB descriptions, by the rules in the module's docstring.

    One Aho-Corasick automaton over the eligible titles of the KB (the 1M-entity KB: 11 s and 0.4 GB).
    """

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.automaton = ahocorasick.Automaton()
        for row, (title, text) in enumerate(zip(kb.titles, kb.texts)):
            if self._eligible(title, text):
                self.automaton.add_word(title, (row, len(title)))
        self.automaton.make_automaton()
        self._common_nouns: dict[int, bool] = {}  # `is_common_noun`'s answers, by KB row

    @staticmethod
    def _eligible(title: str, text: str) -> bool:
        """Title-level rules: capitalised, no date, no disambiguation entry; a single word needs a description."""
        return (len(title) > 1 and title[0].isupper() and not is_date_title(title) and (" " in title or bool(text))
                and not is_disambiguation(text))

    def is_common_noun(self, row: int) -> bool:
        """Whether the entity's own description writes its name (the title without a trailing qualifier) in lower
        case, as whole words: *Senate* or *Country music*, not *Lionel Messi*."""
        if row not in self._common_nouns:
            name = without_qualifier(self.kb.titles[row])
            self._common_nouns[row] = name != name.lower() and re.search(
                rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", self.kb.texts[row]) is not None
        return self._common_nouns[row]

    def usable(self, row: int) -> bool:
        """Whether the entry's description can be a training document: long enough, no date, no disambiguation."""
        text = self.kb.texts[row]
        return (len(text) >= MIN_DESCRIPTION_CHARS and not is_date_title(self.kb.titles[row])
                and not is_disambiguation(text))

    def subject_span(self, row: int) -> tuple[int, int] | None:
        """Where the entity's name stands at the start of its own description (see the module's docstring), or
        None."""
        text = self.kb.texts[row]
        for start in (0, len("The ")) if text.startswith("The ") else (0,):
            for name in subject_names(self.kb.titles[row]):
                end = start + len(name) if text.startswith(name, start) else with_middle_names(text, start, name)
                if end is not None and ends_word(text, end) and not in_longer_name(text, start, end):
                    return start, end
        return None

    def occurrences(self, row: int, subject: tuple[int, int] | None) -> list[Occurrence]:
        """Whole-word occurrences of eligible titles and of the subject's name (at `subject`, see `subject_span`)
        and short forms (`subject_short_forms`) in the description of `row`."""
        text = self.kb.texts[row]
        found = [Occurrence(last + 1 - length, last + 1, hit, False)
                 for last, (hit, length) in self.automaton.iter(text)
                 if starts_word(text, last + 1 - length) and ends_word(text, last + 1)]
        if subject is not None:
            found += [Occurrence(m.start(), m.end(), row, True)
                      for name in (text[slice(*subject)], *subject_short_forms(text, subject))
                      for m in re.finditer(re.escape(name), text)
                      if starts_word(text, m.start()) and ends_word(text, m.end())]
        return found

    def find(self, row: int) -> FoundMentions:
        """The mentions in the description of KB row `row`: its subject and the other KB titles it names."""
        text = self.kb.texts[row]
        subject = self.subject_span(row)
        taken: list[Occurrence] = []
        # Longest first; of equal spans the subject's name, then text order.
        for occurrence in sorted(self.occurrences(row, subject),
                                 key=lambda o: (o.start - o.end, not o.is_subject, o.start)):
            if all(occurrence.end <= other.start or other.end <= occurrence.start for other in taken):
                taken.append(occurrence)
        labelled, rejected = [], {row}  # the subject too: the passage is about it even where its name is not found
        for start, end, hit, is_subject in sorted(taken):
            if self.is_common_noun(hit):
                rejected.add(hit)
            elif is_subject and (start, end) == subject:  # its rules are `subject_span`'s
                labelled.append((start, end, hit))
            elif in_longer_name(text, start, end) or (not is_subject and " " not in text[start:end]
                                                      and starts_sentence(text, start)):
                rejected.add(hit)
            else:
                labelled.append((start, end, hit))
        rows = {hit for _, _, hit in labelled}
        return FoundMentions(tuple(labelled), frozenset(rejected - rows), row in rows)


def description_documents(kb: KnowledgeBase, builder: InputBuilder, passages: int, *, seed: int,
                          finder: DescriptionMentions | None = None) -> list[TrainingDocument]:
    """Training documents cut from random KB descriptions until they hold `passages` passages with a gold.

    Descriptions are drawn in a random order fixed by `seed` among those of `MIN_DESCRIPTION_CHARS` or more that
    are no date or disambiguation entry; one without any mention is skipped. The last document is cut after the
    passage that makes the count, so that exactly `passages` passages with a gold come back (fewer if the KB runs
    out).

    Args:
        kb: the KB the rows of the golds index (the trainer's).
        builder: the input builder of the model being trained.
        passages: passages with a gold wanted (0: none).
        seed: fixes the draw.
        finder: the KB's `DescriptionMentions`, when already built.

    Returns:
        `TrainingDocument`s whose `uri` is `DESCRIPTION_URI` + the described title.
    """
    if passages <= 0:
        return []
    started = time.perf_counter()
    finder = finder or DescriptionMentions(kb)
    documents: list[TrainingDocument] = []
    wanted, mention_count, subjects = passages, 0, 0
    rows = list(range(len(kb)))
    random.Random(seed).shuffle(rows)
    for row in rows:
        if not finder.usable(row):
            continue
        found = finder.find(row)
        if not found.labelled:
            continue
        document = _document(kb, builder, row, found, len(documents))
        with_gold = [i for i, p in enumerate(document.passages) if p.golds]
        if len(with_gold) >= wanted:
            document = replace(document, passages=document.passages[: with_gold[wanted - 1] + 1])
        wanted -= min(len(with_gold), wanted)
        documents.append(document)
        mention_count += len(found.labelled)
        subjects += found.subject_labelled
        if not wanted:
            break
    logger.info("%d KB descriptions -> %d passages with a gold in %.1f s: %.1f mentions per description, "
                "subject labelled in %.0f%%", len(documents), passages - wanted, time.perf_counter() - started,
                mention_count / max(len(documents), 1), 100 * subjects / max(len(documents), 1))
    return documents


def _document(kb: KnowledgeBase, builder: InputBuilder, row: int, found: FoundMentions, index: int) -> TrainingDocument:
    text = kb.texts[row]
    tokens = builder.tokenize_document(text)
    pieces = [(hit, *span) for start, end, hit in found.labelled
              if (span := wordpiece_span(tokens.offsets, start, end)) is not None]
    links = tuple(GoldLink(start, end, kb.titles[hit]) for start, end, hit in found.labelled)
    passages = cut_passages(builder, tokens, index, pieces,
                            title_only_rows=frozenset({row}), unlabelled_rows=found.unlabelled_rows)
    return TrainingDocument(DESCRIPTION_URI + kb.titles[row], text, links, passages)
