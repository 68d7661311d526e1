"""Decoding a document: its links from its passages' scores, found end to end (A2KB) or one per given span (D2KB)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotator.linking import Span
from annotator.pipeline.decoding import PassageLogits, decode_passages, given_span_scores
from annotator.pipeline.document import Document
from annotator.pipeline.merging import LinkedSpan, merge, to_character_spans


@dataclass(frozen=True, kw_only=True)
class DocumentDecoding:
    """EntQA's decoding of every passage (`annotator.pipeline.decoding`), mapped to characters and merged; or, for
    given spans, the best candidate of each."""

    top_spans: int
    max_span_len: int
    threshold: float  # γ; a given span whose best entity scores no higher is NIL

    def links(self, document: Document) -> list[LinkedSpan]:
        """The document's links from its `scores`: decoded end to end, or one per given span (NIL where its best
        entity scores γ or lower)."""
        if document.given is None:
            return self._decoded(document)
        # a blank document has no passages and so nothing to disambiguate against
        return [self._disambiguated(span, document) for span in document.given] if document.passages else []

    def _decoded(self, document: Document) -> list[LinkedSpan]:
        passages, scores = document.passages, document.scores
        labelled = decode_passages([PassageLogits(s.start, s.end, s.rerank, p.starts_word, p.ends_word)
                                    for p, s in zip(passages, scores)],
                                   top_spans=self.top_spans, max_span_len=self.max_span_len, threshold=self.threshold)
        return merge(to_character_spans(labelled, passages, [s.rows for s in scores]))

    def _disambiguated(self, span: Span, document: Document) -> LinkedSpan:
        """The best candidate for a given character span: max of p_rerank × p_span over passages.

        The span's wordpieces are those overlapping its characters; a span that covers none (whitespace,
        characters the tokenizer drops) is scored at the nearest wordpiece. Passages holding its first
        wordpiece score it, cut at the passage end when it runs past.
        """
        start, end = span
        first, last = document.span_pieces(start, end)
        best_row, best_score = -1, -1.0
        for passage, scores in zip(document.passages, document.scores):
            local = first - passage.token_start
            if not 0 <= local < len(passage.ids) or not len(scores.rows):
                continue
            local_end = min(last - passage.token_start, len(passage.ids) - 1)
            values = given_span_scores(scores.start, scores.end, scores.rerank, local, local_end)
            k = int(np.argmax(values))
            if values[k] > best_score:
                best_row, best_score = int(scores.rows[k]), float(values[k])
        return LinkedSpan(start, end, best_row, best_score)
