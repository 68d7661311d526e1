"""Given names, read from the KB's people: the first word of a person's title, where several people bear it."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from annotator.kb.descriptions import EntityDescriptions
from annotator.kb.titles import without_qualifier

# A person's lead gives the birth in brackets in its first sentence: "Julia Fiona Roberts (born October 28, 1967)",
# "Madeleine Albright (born Marie Jana Korbelová; May 15, 1937)"
_BORN = re.compile(r"^[^.]{0,120}\((?:[^()]*[;,] )?(?:born|b\.) ")
# a first word that fewer people bear is as often a place's or a firm's ("Air France", "Santiago de Cuba")
MIN_PEOPLE = 3


def given_names(titles: Sequence[str], descriptions: EntityDescriptions) -> frozenset[str]:
    """The first words of the two- and three-word titles of at least `MIN_PEOPLE` described people."""
    counts: Counter[str] = Counter()
    for row, described in enumerate(descriptions.described()):
        if described and _BORN.search(descriptions[row]):
            words = without_qualifier(titles[row]).split(" ")
            if 2 <= len(words) <= 3:
                counts[words[0]] += 1
    return frozenset(name for name, count in counts.items() if count >= MIN_PEOPLE)
