"""One folding of names, used wherever a text's name is compared with a KB's: case and accents off, spaces one."""
from __future__ import annotations

import hashlib

import numpy as np

from annotator.kb.titles import without_accents


def name_key(name: str) -> str:
    """`name` folded for lookup: accents off, case folded, runs of spaces as one ("Ríos " → "rios")."""
    return " ".join(without_accents(name).casefold().split())


def name_hashes(names: list[str]) -> np.ndarray:
    """(len(names),) uint64: a stable 64-bit hash of each name's `name_key`, so that a table of millions of names
    is one sorted array instead of a dictionary of Python strings."""
    return np.array([int.from_bytes(hashlib.blake2b(name_key(name).encode("utf-8"), digest_size=8).digest(), "little")
                     for name in names], dtype=np.uint64)
