"""What a readable NIF request must also hold for the service to link it and repeat it in the answer."""
from __future__ import annotations

import re

from annotator.service.errors import RequestError
from nif import NifDocument, check_iri

# An RFC 5147 range in a context IRI's fragment, as GERBIL writes it (`...#char=0,85`).
_RANGE = re.compile(r"#char=(\d+),(\d+)$")


def check_answerable(doc: NifDocument) -> None:
    """Refuses, before any linking, a document the linker cannot take or the answer could not repeat.

    NIF readers take empty spans (benchmark corpora hold a few), but a D2KB span names a mention to link,
    so it must hold at least one character. The answer repeats the context IRI, so it must be one that strict
    Turtle readers accept; and it names each phrase by the context's base and the phrase's range, as GERBIL does, so
    a context IRI whose range is not its text's whole (`#char=0,5` on a text of 12 characters) would name a phrase
    as the context itself.

    Raises:
        RequestError: (400) the text is empty, a D2KB span is empty, the context IRI is not an absolute IRI, or its
            range disagrees with its text.
    """
    if not doc.text:
        raise RequestError("bad NIF: nif:isString is empty")
    for annotation in doc.annotations:
        if annotation.start == annotation.end:
            raise RequestError(f"bad NIF: the D2KB span {annotation.start},{annotation.end} is empty; "
                               "expected nif:beginIndex < nif:endIndex")
    try:
        check_iri(doc.uri)
    except ValueError as error:
        raise RequestError(f"bad NIF: the context cannot be answered: {error}") from None
    claimed = _RANGE.search(doc.uri)
    if claimed and (int(claimed.group(1)), int(claimed.group(2))) != (0, len(doc.text)):
        raise RequestError(f"bad NIF: the context IRI's range {claimed.group(0)} disagrees with its text of "
                           f"{len(doc.text)} characters; expected #char=0,{len(doc.text)}")
