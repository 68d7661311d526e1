"""The text the models read: #hashtags and @handles read as words, with every offset mapped back to the original.

The models were trained on news, where "Paris Hilton" is two words and no name carries a sign; a tweet writes
"@ParisHilton", "#WorldCup" or "@ladygaga". So the linker reads a view of each text in which a tag's sign is a space
and its name is cut into words (at underscores, case changes, between letters and digits, and where a lower-case
run spells a multi-word KB title), and answers with the original's offsets. The view only replaces characters and
inserts spaces, so each original character has one place in it. Why and what it gains: docs/decisions.md#tag-view.
"""
from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import accumulate

import numpy as np

from annotator.kb.titles import without_qualifier
from annotator.linking import Span

# A hashtag or handle: the sign, then its name; not after a word character, a slash or an ampersand, which make it
# an e-mail address, a URL's fragment or an HTML entity ("&#39;").
_TAG = re.compile(r"(?<![\w/&])[#@](\w+)")
# Cuts inside a name: fooBar, FOOBar, foo2, 2foo.
_CASE_OR_DIGIT = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
_PIECE = re.compile(r"[^\W_]+")  # a name's parts between underscores
_SHORTEST_RUN = 5  # shorter runs of letters are left whole: too many short titles spell common words


@dataclass(frozen=True)
class TextView:
    """A text as the models read it. `origin[i]` is the original index of view character `i`, or -1 for a
    space the view inserted; `None` where the view is the original itself. `tags`: the original spans of the
    tags' names (the sign left out)."""

    text: str
    origin: tuple[int, ...] | None = None
    tags: tuple[Span, ...] = ()

    def to_original(self, start: int, end: int) -> Span:
        """The original characters of view span `start:end` (inserted spaces at its edges left out)."""
        if self.origin is None:
            return start, end
        inside = [i for i in self.origin[start:end] if i >= 0]
        return inside[0], inside[-1] + 1

    def found_to_original(self, spans: Sequence[Span]) -> list[Span]:
        """Spans found end to end, in original offsets; one that is alone inside a tag's name takes the whole name.

        A tag is one word to its writer: `@taylorswift13` names Taylor Swift whole, read as "taylor swift 13", and
        Microposts annotates 506 of its 522 golds in tags as the whole name.
        """
        original = [self.to_original(start, end) for start, end in spans]
        holders = Counter(self._tag_holding(span) for span in original)
        return [tag if (tag := self._tag_holding(span)) is not None and holders[tag] == 1 else span
                for span in original]

    def _tag_holding(self, span: Span) -> Span | None:
        return next((tag for tag in self.tags if tag[0] <= span[0] and span[1] <= tag[1]), None)

    def to_view(self, spans: Sequence[Span] | None) -> list[Span] | None:
        """Original spans (given for D2KB) in view offsets."""
        if spans is None or self.origin is None:
            return None if spans is None else list(spans)
        place = {original: i for i, original in enumerate(self.origin) if original >= 0}
        return [(place[start], place[end - 1] + 1) for start, end in spans]


class TagReader:
    """Builds each text's `TextView`; lower-case runs are cut where they spell a multi-word title of the KB.

    The titles are kept as hashes of their lower-case letters (8 bytes each, not a dictionary of strings), next to
    the KB row whose title gives the cut.
    """

    def __init__(self, titles: Sequence[str], vocabulary: Collection[str]) -> None:
        """`titles`: the KB's, by row; `vocabulary`: the tokenizer's words, which are never cut ("therapist" is
        not "The Rapist")."""
        self._titles = titles
        self._vocabulary = vocabulary
        hashes, rows = array("q"), array("q")  # flat arrays, not lists of Python ints, while a 1M-entity KB is read
        for row, title in enumerate(titles):
            words = _title_words(title)
            if len(words) >= 2 and all(word.isalpha() for word in words):
                hashes.append(hash("".join(words).lower()))
                rows.append(row)
        keys = np.frombuffer(hashes, dtype=np.int64)
        order = np.argsort(keys, kind="stable")  # on equal letters the first row wins
        self._keys, first = np.unique(keys[order], return_index=True)
        self._rows = np.frombuffer(rows, dtype=np.int64)[order][first]

    def view(self, text: str) -> TextView:
        """`text` with every tag's sign a space and its name cut into words."""
        characters: list[str] = []
        origin: list[int] = []
        tags: list[Span] = []
        done = 0
        for tag in _TAG.finditer(text):
            characters += text[done:tag.start()] + " "
            origin += range(done, tag.start() + 1)
            name_start = tag.start(1)
            cuts = self._cuts(tag.group(1))
            for offset, character in enumerate(tag.group(1)):
                if offset in cuts:
                    characters.append(" ")
                    origin.append(-1)
                characters.append(" " if character == "_" else character)
                origin.append(name_start + offset)
            tags.append(tag.span(1))
            done = tag.end()
        if not origin:
            return TextView(text)
        characters += text[done:]
        origin += range(done, len(text))
        return TextView("".join(characters), tuple(origin), tuple(tags))

    def _cuts(self, name: str) -> set[int]:
        """Offsets in `name` before which a space goes."""
        cuts = set()
        for piece in _PIECE.finditer(name):
            bounds = [piece.start(), *(piece.start() + cut.start() for cut in _CASE_OR_DIGIT.finditer(piece.group())),
                      piece.end()]
            cuts.update(bounds[1:-1])
            for start, end in zip(bounds, bounds[1:]):
                if name[start:end].isalpha():
                    cuts.update(start + offset for offset in self._title_cuts(name[start:end].lower()))
        return cuts - {0}

    def _title_cuts(self, letters: str) -> list[int]:
        """Where the KB title spelled by `letters` (lower case, no spaces) puts its word breaks; none when no
        title spells it, or it is short, or it is a word in itself."""
        if len(letters) < _SHORTEST_RUN or letters in self._vocabulary:
            return []
        key = hash(letters)
        at = int(np.searchsorted(self._keys, key))
        if at == len(self._keys) or self._keys[at] != key:
            return []
        words = _title_words(self._titles[int(self._rows[at])])
        if "".join(words).lower() != letters:  # a hash collision
            return []
        return list(accumulate(len(word) for word in words[:-1]))


def _title_words(title: str) -> list[str]:
    """A title's words without its trailing qualifier ("Chris Brown (American entertainer)" -> Chris, Brown)."""
    return without_qualifier(title).split()
