"""The learned decision as a stage of the linker: after the readings, every span's candidates are scored by the
decision's model and its links replace decoding's."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from annotator.decision.features import document_candidates
from annotator.decision.model import Decision
from annotator.knowledge import Knowledge
from annotator.model.config import LinkerConfig
from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.stages import Reading


@dataclass(frozen=True, eq=False)
class LearnedDecision:
    """Links chosen by `decision` over each document's span candidates (given spans, or found by decoding at the
    decision's own bar)."""

    decision: Decision
    titles: Sequence[str]
    described: np.ndarray  # (rows,) bool
    knowledge: Knowledge
    config: LinkerConfig

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            if not document.passages:
                continue
            spans = document_candidates(document, self.titles, self.described, self.knowledge,
                                        top_k=self.config.top_k, threshold=self.config.threshold,
                                        found_threshold=self.decision.settings.decoding_threshold,
                                        top_spans=self.config.top_spans, max_span_len=self.config.max_span_len)
            document.links = self.decision.links(spans, given=document.given is not None)
