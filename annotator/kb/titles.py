"""KB titles as text names them."""
from __future__ import annotations

import re

_QUALIFIER = re.compile(r" \([^()]*\)$")


def without_qualifier(title: str) -> str:
    """The title without a trailing parenthesised qualifier: *Taurus* for *Taurus (astrology)*."""
    return _QUALIFIER.sub("", title)
