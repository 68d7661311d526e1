"""The annotator tests' tiny checkpoint, KB and linker, shared with the command line's tests."""
from __future__ import annotations

from tests.annotator.conftest import entqa_cache, tiny_checkpoint, tiny_kb, tiny_linker, tokenizer

__all__ = ["entqa_cache", "tiny_checkpoint", "tiny_kb", "tiny_linker", "tokenizer"]  # fixtures, found by pytest
