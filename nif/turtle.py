"""Turtle terms spelled so that every reader takes them back unchanged: rdflib, Oxigraph and Redland's rapper."""
from __future__ import annotations

import math

import pyoxigraph

# Strings are written single-quoted with every control character escaped: rdflib's own writer switches to
# triple quotes at a newline, which rapper misreads when the text ends in an escaped quote (issue 47).
_STRING_ESCAPES = {ord("\\"): "\\\\", ord('"'): '\\"', ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t",
                   ord("\b"): "\\b", ord("\f"): "\\f"}
_STRING_ESCAPES.update({code: f"\\u{code:04X}" for code in [*range(0x20), 0x7F] if code not in _STRING_ESCAPES})


def check_iri(value: str) -> None:
    """Checks that `value` is an absolute RFC 3987 IRI, the only kind the strict readers (Oxigraph) accept.

    Such an IRI holds no character that Turtle's IRIREF forbids (controls, space, `<>"{}|^`\\`), so it is
    written as it is.

    Raises:
        ValueError: it is not, with Oxigraph's reason (the first offending character, a missing scheme, ...).
    """
    try:
        pyoxigraph.NamedNode(value)
    except ValueError as error:
        raise ValueError(f"{value[:80]!r} is not an absolute IRI ({error})") from None


def iri(value: str) -> str:
    """`<value>`, once `check_iri` has accepted it."""
    check_iri(value)
    return f"<{value}>"


def string(value: str) -> str:
    """A one-line double-quoted string literal (no datatype) that reads back as exactly `value`."""
    return f'"{value.translate(_STRING_ESCAPES)}"'


def double(value: float) -> str:
    """`value` as an xsd:double literal in a lexical form XML Schema allows (`INF`, not Python's `inf`)."""
    if math.isnan(value):
        lexical = "NaN"
    elif math.isinf(value):
        lexical = "INF" if value > 0 else "-INF"
    else:
        lexical = repr(value)
    return f'"{lexical}"^^xsd:double'
