"""The EntQA linker: passages → retrieval → one batched reader pass → decoding → merging."""
from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from annotator.data_types import Mention
from annotator.entity_index import EntityIndex
from annotator.kb.descriptions import EntityDescriptions
from annotator.linking import Span, check_spans
from annotator.model.config import LinkerConfig
from annotator.model.reader import Reader
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import Batch, DocumentTokens, InputBuilder, Passage
from annotator.pipeline.decoding import decode_passage, given_span_scores
from annotator.pipeline.document_candidates import document_candidates
from annotator.pipeline.mention_table import NameCandidates, with_name_candidates
from annotator.pipeline.merging import LinkedSpan, merge, outside, to_character_spans
from annotator.pipeline.short_names import open_name_runs, short_name_links
from annotator.runtime.cancellation import check_cancelled
from annotator.runtime.onnx_int8 import OnnxInt8Reader
from annotator.runtime.settings import RuntimeSettings
from annotator.uris import NIL_NAMESPACE, dbpedia_uri, not_in_wiki_uri

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PassageScores:
    """The reader's scores of one passage against its retrieved candidates."""

    rows: np.ndarray  # (K,) KB rows of the candidates
    start: np.ndarray  # (K, 1 + n) start logits over [CLS] + the n passage wordpieces
    end: np.ndarray  # (K, 1 + n) end logits
    rerank: np.ndarray  # (K,) rerank logits

    def extended(self, other: PassageScores) -> PassageScores:
        """These candidates followed by `other`'s, scored on the same passage."""
        return PassageScores(np.concatenate([self.rows, other.rows]), np.concatenate([self.start, other.start]),
                             np.concatenate([self.end, other.end]), np.concatenate([self.rerank, other.rerank]))


class Linker:
    """EntQA end to end: `link(text)` (A2KB) or `link(text, spans)` (D2KB) → mentions sorted by start."""

    def __init__(self, *, config: LinkerConfig, builder: InputBuilder, retriever: DualEncoder,
                 reader: Reader | OnnxInt8Reader, index: EntityIndex, device: torch.device, model_dir: Path,
                 kb_path: Path | None, names: NameCandidates | None = None,
                 descriptions: EntityDescriptions | None = None, runtime: RuntimeSettings | None = None) -> None:
        self.config = config
        self.runtime = runtime or RuntimeSettings()  # the host's settings: batch sizes here
        self.builder = builder
        self.retriever = retriever
        self.reader = reader
        self.index = index
        self.device = device
        self.model_dir = model_dir
        self.kb_path = kb_path
        self.names = names  # the mention table's candidates (`config.mention_candidates`), if on
        self.descriptions = descriptions or EntityDescriptions.none()  # by index row, for Mention.description

    @classmethod
    def from_pretrained(cls, model_dir: str | Path, *, kb_path: str | Path | None = None,
                        index_dir: str | Path | None = None, device: str | torch.device | None = None,
                        config_overrides: Mapping[str, Any] | None = None,
                        runtime: RuntimeSettings | None = None) -> Linker:
        """Load a checkpoint folder and the entity index of a KB.

        The model's settings are the checkpoint's config.json with `config_overrides`; the host's are `runtime`
        (default `RuntimeSettings()`; the environment is the caller's to read, see `annotator.settings`). The KB
        is `kb_path`, else the demo KB inside the model folder (`kb/entities.jsonl.gz`, with its prebuilt
        `index/`). Its index is read from `index_dir` when given, else from the model folder (demo KB) or the
        cache, where it is built once (resuming an interrupted build).

        Raises:
            ModelLoadError: missing checkpoint files, no KB, or an index built for something else.
        """
        from annotator.pipeline.loading import load_linker  # loading imports this module

        return load_linker(model_dir, kb_path=kb_path, index_dir=index_dir, device=device,
                           config_overrides=config_overrides, runtime=runtime, linker_type=cls)

    def describe(self) -> dict[str, str | int | float]:
        """Model, encoder, KB and its entity count, index, mention table, device and γ in use (for /health)."""
        names = ("off" if self.names is None else
                 f"{len(self.names.rows_by_name)} names, up to {self.config.mention_candidates} entities each")
        return {"model": str(self.model_dir), "encoder": self.config.encoder,
                "kb": str(self.kb_path or self.index.directory), "entities": len(self.index),
                "index": self.index.index_type, "mention_table": names,
                "device": f"{self.device} {self.reader.precision}", "threshold": self.config.threshold}

    def link(self, text: str, spans: Sequence[Span] | None = None) -> list[Mention]:
        """Mentions in `text`: found end to end, or one per given `(start, end)` span (D2KB).

        Raises:
            ValueError: a given span is empty or outside the text.
        """
        return self._link_documents([text], [spans])[0]

    def link_batch(self, texts: Sequence[str],
                   spans: Sequence[Sequence[Span] | None] | None = None) -> list[list[Mention]]:
        """`link` for several documents, sharing the retrieval call and the reader batches.

        Args:
            texts: the documents.
            spans: each document's given spans (D2KB) or None (A2KB), one entry per text; None: all A2KB.

        Raises:
            ValueError: `spans` does not have one entry per text, or a given span is empty or outside its text.
        """
        if spans is None:
            spans = [None] * len(texts)
        elif len(spans) != len(texts):
            raise ValueError(f"spans has {len(spans)} entries for {len(texts)} texts: give one per text, or None")
        return self._link_documents(texts, spans)

    # -- stages ---------------------------------------------------------------------------------
    def _link_documents(self, texts: Sequence[str], spans: Sequence[Sequence[Span] | None]) -> list[list[Mention]]:
        for text, given in zip(texts, spans):
            check_spans(text, given)
        documents = [self.builder.tokenize_document(text) for text in texts]
        passages = [self.builder.split_passages(document) for document in documents]
        flat = [(passage, document.topic_ids) for document, ps in zip(documents, passages) for passage in ps]
        if not flat:
            return [[] for _ in texts]
        inputs = [self.builder.passage_input(passage, topic) for passage, topic in flat]
        lengths = [len(passage.ids) for passage, _ in flat]
        candidates = self._retrieve(inputs)
        if self.names is not None:
            extra = [rows for text, ps in zip(texts, passages)
                     for rows in self.names.for_passages(text, [p.characters for p in ps])]
            candidates = with_name_candidates(candidates, extra)
        scores = _per_document(self._read(inputs, lengths, candidates), passages)
        linked = [self._mentions_from_scores(given, document, doc_passages, doc_scores)
                  for given, document, doc_passages, doc_scores in zip(spans, documents, passages, scores)]
        if self.config.document_candidates:
            linked = self._add_document_mentions(texts, spans, documents, passages, scores, linked, inputs, lengths)
        if self.config.short_names:
            linked = [self._add_short_names(text, given, doc_linked)
                      for text, given, doc_linked in zip(texts, spans, linked)]
        return [[self._mention(text, span) for span in sorted(doc_linked, key=lambda s: (s.start, s.end))]
                for text, doc_linked in zip(texts, linked)]

    def _mentions_from_scores(self, given: Sequence[Span] | None, document: DocumentTokens,
                              passages: Sequence[Passage], scores: Sequence[PassageScores]) -> list[LinkedSpan]:
        """One document's mentions from its passages' scores: decoded end to end, or one per given span."""
        if given is None:
            return self._decode(passages, scores)
        # a blank document has no passages and so nothing to disambiguate against
        return [_disambiguate(span, document, passages, scores) for span in given] if passages else []

    def _add_document_mentions(self, texts: Sequence[str], spans: Sequence[Sequence[Span] | None],
                               documents: Sequence[DocumentTokens], passages: Sequence[Sequence[Passage]],
                               scores: Sequence[Sequence[PassageScores]], linked: Sequence[list[LinkedSpan]],
                               inputs: Sequence[Sequence[int]], lengths: Sequence[int]) -> list[list[LinkedSpan]]:
        """The second stage: each passage read again against the entities linked elsewhere in its document
        (`annotator.pipeline.document_candidates`). End to end, the mentions found outside the first pass's are added;
        given spans (D2KB) are disambiguated again over all their candidates.
        """
        # NIL answers (given spans) suggest nothing: their entities were not linked.
        extras = [document_candidates(text, doc_passages, [s.rows for s in doc_scores],
                                      [s for s in first if self._is_linked(s)], self.index.titles, given=given)
                  for text, given, doc_passages, doc_scores, first in zip(texts, spans, passages, scores, linked)]
        flat = [rows for doc_extras in extras for rows in doc_extras]
        if not any(len(rows) for rows in flat):
            return list(linked)
        extra_scores = _per_document(self._read(inputs, lengths, flat), passages)
        result = []
        for given, document, doc_passages, doc_scores, doc_extra_scores, first in zip(
                spans, documents, passages, scores, extra_scores, linked):
            if not any(len(s.rows) for s in doc_extra_scores):
                result.append(first)
                continue
            extended = [s.extended(extra) for s, extra in zip(doc_scores, doc_extra_scores)]
            if given is not None:
                result.append(self._mentions_from_scores(given, document, doc_passages, extended))
                continue
            result.append(merge(first + outside(self._decode(doc_passages, extended), first)))
        return result

    def _add_short_names(self, text: str, given: Sequence[Span] | None,
                         linked: list[LinkedSpan]) -> list[LinkedSpan]:
        """A surname or short form linked to the entity the document linked in full (`annotator.pipeline.short_names`):
        end to end, open capitalised runs are added; given spans (D2KB) answered NIL may take an entity."""
        full = [span for span in linked if self._is_linked(span)]
        if given is None:
            return linked + outside(short_name_links(text, open_name_runs(text, linked), full, self.index.titles),
                                    linked)
        nil = [(span.start, span.end) for span in linked if not self._is_linked(span)]
        named = {(span.start, span.end): span for span in short_name_links(text, nil, full, self.index.titles)}
        return [named.get((span.start, span.end), span) for span in linked]

    def _retrieve(self, inputs: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """KB rows of the top-K candidates of every passage (one faiss call for all of them)."""
        size = self.runtime.batch_sizes(self.device.type)[1]
        vectors = []
        with torch.inference_mode():
            for first in range(0, len(inputs), size):
                check_cancelled()
                vectors.append(self.retriever.embed_passages(
                    self.builder.pad(inputs[first:first + size]).to(self.device)).float())
        _, rows = self.index.search(torch.cat(vectors).cpu().numpy(), self.config.top_k)
        return [r[r >= 0] for r in rows]

    def _read(self, inputs: Sequence[Sequence[int]], passage_lengths: Sequence[int],
              candidates: Sequence[np.ndarray]) -> list[PassageScores]:
        """The reader's scores of every (passage, candidate) pair, gathered per passage.

        Only [CLS] and passage positions are kept: the topic is context, never a mention.
        """
        counts = [len(rows) for rows in candidates]
        batch = self.builder.reader_batch(inputs, np.repeat(np.arange(len(candidates)), counts),
                                          *self.index.entity_rows(np.concatenate(candidates)))
        widths = [1 + n for n in passage_lengths]  # [CLS] + passage wordpieces
        start, end, rerank = self._score_pairs(batch, max(widths))
        ends = np.cumsum(counts)  # each passage's pairs are consecutive
        return [PassageScores(rows, start[e - n:e, :w], end[e - n:e, :w], rerank[e - n:e])
                for rows, n, e, w in zip(candidates, counts, ends, widths)]

    def _score_pairs(self, batch: Batch, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One reader pass over all pairs, batched by similar length (the seam a naive reader overrides).

        Args:
            batch: every pair, as `InputBuilder.reader_batch` makes them.
            width: how many leading positions of start/end logits to return.

        Returns:
            start (pairs, width), end (pairs, width) and rerank (pairs,) logits, in the order of the
            batch's rows; positions beyond a pair's own length are -inf.
        """
        pairs = batch.input_ids.shape[0]
        start, end = np.full((pairs, width), -np.inf), np.full((pairs, width), -np.inf)
        rerank = np.empty(pairs)
        # Similar lengths share a forward pass, so that little compute goes to padding.
        order = np.argsort(batch.attention_mask.sum(1).numpy(), kind="stable")
        size = self.runtime.batch_sizes(self.device.type)[0]
        chunks = [order[first:first + size] for first in range(0, pairs, size)]
        # All cut before the first pass: torch's threads (cutting) and ONNX Runtime's (reading) would
        # otherwise wake each other between passes (docs/decisions.md#no-thread-spinning).
        parts = [batch.rows(chunk) for chunk in chunks]
        for chosen, part in zip(chunks, parts):
            check_cancelled()  # a document nobody waits for any more stops here (annotator.runtime.cancellation)
            part_start, part_end, part_rerank = self._forward(part, width)
            columns = part_start.shape[1]
            start[chosen, :columns], end[chosen, :columns], rerank[chosen] = part_start, part_end, part_rerank
        return start, end, rerank

    def _forward(self, batch: Batch, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One reader forward pass: start/end logits of the first `width` positions, and rerank."""
        with torch.inference_mode():
            logits = self.reader(batch.to(self.device))
        start, end = (x[:, :width].float().cpu().numpy() for x in (logits.start, logits.end))
        return start, end, logits.rerank.float().cpu().numpy()

    def _decode(self, passages: Sequence[Passage], scores: Sequence[PassageScores]) -> list[LinkedSpan]:
        config = self.config
        labelled = [span for i, s in enumerate(scores)
                    for span in decode_passage(s.start, s.end, s.rerank, top_spans=config.top_spans,
                                               max_span_len=config.max_span_len, threshold=config.threshold,
                                               passage=i, starts_word=passages[i].starts_word,
                                               ends_word=passages[i].ends_word)]
        return merge(to_character_spans(labelled, passages, [s.rows for s in scores]))

    def _is_linked(self, span: LinkedSpan) -> bool:
        """Whether `span` names its entity rather than NIL: the paper's bar, score above γ. Decoded spans always
        pass (decoding keeps only those); a given span (D2KB) whose best entity scores lower is NIL."""
        return span.score > self.config.threshold

    def _mention(self, text: str, span: LinkedSpan) -> Mention:
        surface = text[span.start:span.end]
        if not self._is_linked(span):
            return Mention(span.start, span.end, surface, None, not_in_wiki_uri(NIL_NAMESPACE, surface), span.score)
        title = self.index.titles[span.entity]
        return Mention(span.start, span.end, surface, title, dbpedia_uri(title), span.score,
                       self.descriptions[span.entity])


def _per_document(scores: Sequence[PassageScores],
                  passages: Sequence[Sequence[Passage]]) -> list[list[PassageScores]]:
    """Scores of all documents' passages, in order, split into one list per document."""
    bounds = np.cumsum([0] + [len(doc_passages) for doc_passages in passages])
    return [list(scores[first:last]) for first, last in zip(bounds[:-1], bounds[1:])]


def _disambiguate(span: Span, document: DocumentTokens, passages: Sequence[Passage],
                  scores: Sequence[PassageScores]) -> LinkedSpan:
    """The best retrieved entity for a given character span: max of p_rerank × p_span over passages.

    The span's wordpieces are those overlapping its characters; a span that covers none (whitespace,
    characters the tokenizer drops) is scored at the nearest wordpiece. Passages holding its first
    wordpiece score it, cut at the passage end when it runs past.
    """
    start, end = span
    covered = [j for j, (s, e) in enumerate(document.offsets) if s < end and start < e]
    if not covered:
        nearest = min(range(len(document.offsets)), key=lambda j: abs(document.offsets[j][0] - start))
        covered = [nearest]
    first, last = covered[0], covered[-1]
    best_row, best_score = -1, -1.0
    for passage, passage_scores in zip(passages, scores):
        local = first - passage.token_start
        if not 0 <= local < len(passage.ids) or not len(passage_scores.rows):
            continue
        local_end = min(last - passage.token_start, len(passage.ids) - 1)
        values = given_span_scores(passage_scores.start, passage_scores.end, passage_scores.rerank, local, local_end)
        k = int(np.argmax(values))
        if values[k] > best_score:
            best_row, best_score = int(passage_scores.rows[k]), float(values[k])
    return LinkedSpan(start, end, best_row, best_score)
