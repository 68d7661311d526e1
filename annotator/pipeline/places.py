"""Whether the text reads a name as a place: the post-processors that turn a name into a team or a person leave it."""
from __future__ import annotations

import re

# "in France", "In France"; a dateline's word and its comma: "TOFTIR, Faroe Islands"
_PLACE_BEFORE = re.compile(r"(?:\b[Ii]n|[A-Z][\w.'-]*,) $")
# how far before the name the place words are looked for: a dateline's word and its comma, not the whole document
_PLACE_WINDOW = 64


def reads_as_place(text: str, start: int) -> bool:
    """Whether the name at `start` follows "in" or a capitalised word and a comma."""
    return _PLACE_BEFORE.search(text, max(0, start - _PLACE_WINDOW), start) is not None
