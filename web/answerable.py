"""What a readable NIF request must also hold for the service to link it and repeat it in the answer."""
from __future__ import annotations

from nif import NifDocument, check_iri
from web.errors import RequestError


def check_answerable(doc: NifDocument) -> None:
    """Refuses, before any linking, a document the linker cannot take or the answer could not repeat.

    NIF readers take empty spans (benchmark corpora hold a few), but a D2KB span names a mention to link,
    so it must hold at least one character. The answer repeats the context IRI, so it must be one that strict
    Turtle readers accept.

    Raises:
        RequestError: (400) the text is empty, a D2KB span is empty, or the context IRI is not an absolute IRI.
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
