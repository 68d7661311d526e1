"""The one error the NIF package raises for input it cannot read."""
from __future__ import annotations


class NifParseError(ValueError):
    """Input that is not usable NIF; the message is one line saying what was expected and what was found."""
