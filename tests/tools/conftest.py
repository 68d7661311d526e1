"""The annotator tests' tiny checkpoint and KB, shared with the tools' tests."""
from __future__ import annotations

from tests.annotator.conftest import entqa_cache, tiny_checkpoint, tiny_kb, tokenizer

__all__ = ["entqa_cache", "tiny_checkpoint", "tiny_kb", "tokenizer"]  # fixtures, found by pytest
