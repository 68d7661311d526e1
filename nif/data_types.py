"""Documents and annotations as NIF carries them (offsets in Unicode code points, half-open)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class NifAnnotation:
    """One `nif:Phrase`-like node: a span of the context string and its meanings.

    `start`/`end` are code-point indices into the context's `nif:isString` (Python `str` indices),
    `uris` the `itsrdf:taIdentRef` values (empty for a bare span, as in a D2KB request), `confidence`
    the `itsrdf:taConfidence` if any.
    """

    start: int
    end: int
    uris: tuple[str, ...] = ()
    confidence: float | None = None


@dataclass(frozen=True)
class NifDocument:
    """One `nif:Context` with its string and the annotations that reference it."""

    uri: str
    text: str
    annotations: tuple[NifAnnotation, ...] = field(default_factory=tuple)
