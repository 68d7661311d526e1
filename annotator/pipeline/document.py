"""A document on its way through the linker: its text, tokens and passages, and what each stage adds (the passages'
scores, the links), in one object."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from annotator.linking import Span
from annotator.model.tokenization import DocumentTokens, InputBuilder, Passage
from annotator.pipeline.merging import LinkedSpan, outside

@dataclass(frozen=True)
class PassageScores:
    """The reader's scores of one passage against its candidates."""

    rows: np.ndarray  # (K,) KB rows of the candidates
    start: np.ndarray  # (K, 1 + n) start logits over [CLS] + the n passage wordpieces
    end: np.ndarray  # (K, 1 + n) end logits
    rerank: np.ndarray  # (K,) rerank logits
    title_only: np.ndarray | None = None  # (K,) bool: read with the description left blank; None: none was

    def read_title_only(self) -> PassageScores:
        """The same scores, marked as read with each candidate's description left blank."""
        return PassageScores(self.rows, self.start, self.end, self.rerank, np.ones(len(self.rows), dtype=bool))

    def title_only_mask(self) -> np.ndarray:
        """(K,) bool: which candidates were read title-only."""
        return np.zeros(len(self.rows), dtype=bool) if self.title_only is None else self.title_only

    def extended(self, other: PassageScores) -> PassageScores:
        """These candidates followed by `other`'s, scored on the same passage."""
        marks = (None if self.title_only is None and other.title_only is None
                 else np.concatenate([self.title_only_mask(), other.title_only_mask()]))
        return PassageScores(np.concatenate([self.rows, other.rows]), np.concatenate([self.start, other.start]),
                             np.concatenate([self.end, other.end]), np.concatenate([self.rerank, other.rerank]),
                             marks)


@dataclass(eq=False)
class Document:
    """One text being linked. Made from the text and its given spans; the reading sets `scores` (one per passage),
    the decoding sets `links`, and the post-processors revise both."""

    text: str
    given: Sequence[Span] | None  # the spans to disambiguate (D2KB); None: find the mentions (A2KB)
    tokens: DocumentTokens
    passages: list[Passage]
    inputs: list[list[int]]  # each passage's model input: [CLS] passage [unused1] topic [SEP]
    scores: list[PassageScores] = field(default_factory=list)
    links: list[LinkedSpan] = field(default_factory=list)

    @classmethod
    def tokenized(cls, text: str, given: Sequence[Span] | None, builder: InputBuilder) -> Document:
        """`text` cut into wordpieces and overlapping passages, with each passage's model input."""
        tokens = builder.tokenize_document(text)
        passages = builder.split_passages(tokens)
        return cls(text, given, tokens, passages, [builder.passage_input(p, tokens.topic_ids) for p in passages])

    def span_pieces(self, start: int, end: int) -> tuple[int, int]:
        """The wordpieces (first, last) that characters `start:end` overlap; the nearest one where they overlap
        none (whitespace, characters the tokenizer drops)."""
        offsets = self.tokens.offsets
        covered = [j for j, (s, e) in enumerate(offsets) if s < end and start < e]
        if not covered:
            covered = [min(range(len(offsets)), key=lambda j: abs(offsets[j][0] - start))]
        return covered[0], covered[-1]

    def add_links(self, found: Iterable[LinkedSpan]) -> None:
        """Take the links a post-processor found: end to end, those that overlap no link yet; for given spans
        (D2KB), each replaces the answer on its span."""
        found = list(found)
        if self.given is None:
            self.links = self.links + outside(found, self.links)
            return
        self.relink(found)

    def relink(self, found: Iterable[LinkedSpan]) -> None:
        """Take the links a post-processor gave spans already linked or given: each replaces the link on its span."""
        by_span = {(span.start, span.end): span for span in found}
        self.links = [by_span.get((span.start, span.end), span) for span in self.links]
