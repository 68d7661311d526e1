"""KB titles as text names them."""
from __future__ import annotations

import re
import unicodedata

_QUALIFIER = re.compile(r" \([^()]*\)$")


def without_qualifier(title: str) -> str:
    """The title without a trailing parenthesised qualifier: *Taurus* for *Taurus (astrology)*."""
    return _QUALIFIER.sub("", title)


def without_accents(text: str) -> str:
    """`text` with its accents taken off: "Rios" for "Ríos", "Chisinau" for "Chişinău"."""
    if text.isascii():  # most titles and words: no accent to take off
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
