"""The learned decision's features: for each span of a document (given, or found by decoding), its candidate
entities, each described by the reader's scores, the retriever's rank, what the KB knows (name priors, prominence,
the entity graph) and how the span's text and document relate to the entity.

Pure functions of a read document (its passages' scores and first-pass links), the KB's titles and the knowledge
tables: the same inputs give the same rows.
"""
from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from annotator.kb.titles import without_qualifier
from annotator.knowledge import Knowledge, name_key
from annotator.pipeline.decoding import PassageLogits, decode_passages, softmax
from annotator.pipeline.document import Document
from annotator.pipeline.merging import to_character_spans

WORD = re.compile(r"\w+(?:[.'’&-]\w+)*")

FEATURES = (
    # the reader, read with descriptions: best over the passages that hold the span
    "score", "log_score", "p_rerank", "p_span", "rerank_logit", "no_mention", "rank", "margin", "passages",
    # the reader, read with the title only (the title-only look; -1: not read so)
    "title_only_score", "title_only_rerank_logit",
    # the retriever: the candidate's best position among its passages' candidates (beyond K: added by name or title)
    "retrieval_rank", "added",
    # the KB: name priors, prominence, a description
    "p_linked", "linked", "name_links", "p_described", "described_by_name", "name_descriptions", "prior_rank",
    "in_links", "described",
    # the span's text and the title
    "exact", "folded", "base", "qualified", "comma", "words_in_title", "title_words_in_text", "last_word",
    "first_word", "acronym", "span_words", "title_words",
    # the document
    "same_elsewhere", "named_in_full", "related_links", "related_share", "related_spans", "candidate_spans",
    # the kind of text and span
    "given", "upper_text", "log_length", "span_upper", "span_lower", "in_longer_name",
)
# the features by what they know, for ablations (`python -m annotator.decision.training --without GROUP`)
FEATURE_GROUPS = {
    "reader": ("score", "log_score", "p_rerank", "p_span", "rerank_logit", "no_mention", "rank", "margin", "passages",
               "title_only_score", "title_only_rerank_logit", "retrieval_rank", "added"),
    "priors": ("p_linked", "linked", "name_links", "p_described", "described_by_name", "name_descriptions",
               "prior_rank"),
    "prominence": ("in_links", "described"),
    "names": ("exact", "folded", "base", "qualified", "comma", "words_in_title", "title_words_in_text", "last_word",
              "first_word", "acronym", "span_words", "title_words"),
    "coherence": ("related_links", "related_share", "related_spans", "candidate_spans"),
    "document": ("same_elsewhere", "named_in_full", "given", "upper_text", "log_length", "span_upper", "span_lower",
                 "in_longer_name"),
}
assert sorted(sum(FEATURE_GROUPS.values(), ())) == sorted(FEATURES)
NOT_READ = -1.0
COHERENCE_CANDIDATES = 3  # each other span's likeliest candidates that coherence counts


@dataclass(frozen=True)
class SpanCandidates:
    """One span's candidates and their feature rows."""

    start: int
    end: int
    rows: np.ndarray  # (m,) KB rows
    features: np.ndarray  # (m, len(FEATURES)) float32


@dataclass(frozen=True)
class _Reading:
    """Per candidate row of a span: the best of each reading's scores."""

    score: float
    p_rerank: float
    p_span: float
    rerank_logit: float
    no_mention: float
    retrieval_rank: int
    passages: int
    title_only_score: float
    title_only_rerank_logit: float


@dataclass(frozen=True)
class _PassageProbabilities:
    """One passage's reader scores as probabilities, computed once per document."""

    token_start: int
    length: int  # wordpieces
    rows: list[int]
    p_start: np.ndarray  # (K, 1 + n)
    p_end: np.ndarray
    p_rerank: np.ndarray  # (K,) softmaxed within each reading (with descriptions, title-only)
    rerank: np.ndarray  # (K,) logits
    title_only: np.ndarray  # (K,) bool


def passage_probabilities(document: Document) -> list[_PassageProbabilities]:
    """Every passage's start, end and rerank probabilities."""
    result = []
    for passage, scores in zip(document.passages, document.scores):
        title_only = scores.title_only_mask()
        p_rerank = np.zeros(len(scores.rows))
        for mask in (~title_only, title_only):  # each reading softmaxes over its own candidates
            if mask.any():
                p_rerank[mask] = softmax(scores.rerank[mask].astype(np.float64))
        result.append(_PassageProbabilities(passage.token_start, len(passage.ids), scores.rows.tolist(),
                                            softmax(scores.start.astype(np.float64)),
                                            softmax(scores.end.astype(np.float64)), p_rerank,
                                            scores.rerank.astype(np.float64), title_only))
    return result


def span_readings(passages: Sequence[_PassageProbabilities], first: int, last: int) -> dict[int, _Reading]:
    """Each candidate's best reading of the span (wordpieces `first..last`) over the passages that hold its first
    wordpiece: p_rerank × p_span, its parts, and the title-only reading's."""
    best: dict[int, dict[str, float]] = {}
    for passage in passages:
        local = first - passage.token_start
        if not 0 <= local < passage.length or not passage.rows:
            continue
        local_end = min(last - passage.token_start, passage.length - 1)
        p_span = passage.p_start[:, local + 1] * passage.p_end[:, local_end + 1]
        values = passage.p_rerank * p_span
        for k, row in enumerate(passage.rows):
            entry = best.setdefault(row, {"score": -1.0, "p_rerank": 0.0, "p_span": 0.0, "rerank_logit": -99.0,
                                          "no_mention": 1.0, "retrieval_rank": 999, "passages": 0,
                                          "title_only_score": NOT_READ, "title_only_rerank_logit": NOT_READ})
            if passage.title_only[k]:
                entry["title_only_score"] = max(entry["title_only_score"], float(values[k]))
                entry["title_only_rerank_logit"] = max(entry["title_only_rerank_logit"], float(passage.rerank[k]))
                continue
            entry["passages"] += 1
            entry["retrieval_rank"] = min(entry["retrieval_rank"], k)
            entry["rerank_logit"] = max(entry["rerank_logit"], float(passage.rerank[k]))
            if values[k] > entry["score"]:
                entry.update(score=float(values[k]), p_rerank=float(passage.p_rerank[k]), p_span=float(p_span[k]),
                             no_mention=float(passage.p_start[k, 0] * passage.p_end[k, 0]))
    return {row: _Reading(**entry) for row, entry in best.items()}


def found_spans(document: Document, *, top_spans: int, max_span_len: int, threshold: float) -> dict[
        tuple[int, int], set[int]]:
    """Decoding at a low bar: each character span found, with the candidate rows that found it."""
    labelled = decode_passages([PassageLogits(s.start, s.end, s.rerank, p.starts_word, p.ends_word)
                                for p, s in zip(document.passages, document.scores)],
                               top_spans=top_spans, max_span_len=max_span_len, threshold=threshold)
    # a title-only reading suggests no span on its own: its score is a feature of the others'
    labelled = [span for span in labelled if not document.scores[span.passage].title_only_mask()[span.candidate]]
    spans: dict[tuple[int, int], set[int]] = {}
    for span in to_character_spans(labelled, document.passages, [s.rows for s in document.scores]):
        spans.setdefault((span.start, span.end), set()).add(span.entity)
    return spans


class FeatureContext:
    """What the features of one document share: its text, the KB's titles and knowledge, the first pass's links."""

    def __init__(self, document: Document, titles: Sequence[str], described: np.ndarray, knowledge: Knowledge, *,
                 top_k: int, threshold: float, held_out: Mapping[str, Mapping[int, int]] | None = None) -> None:
        self.held_out = held_out or {}  # name key → row → training links left out of the priors (training only)
        self.document = document
        self.titles = titles
        self.described = described  # (rows,) bool: whether each KB entry has a description
        self.knowledge = knowledge
        self.top_k = top_k
        text = document.text
        letters = [c for c in text if c.isalpha()]
        self.upper_text = sum(c.isupper() for c in letters) / max(len(letters), 1)
        self.log_length = math.log1p(len(text))
        self.linked = [link for link in document.links if link.is_linked(threshold)]
        self.related = knowledge.related
        self._neighbour_sets: dict[int, frozenset[int]] = {}
        self.passages = passage_probabilities(document)

    def _neighbours(self, row: int) -> frozenset[int]:
        """The entries related to `row` (kept per document: a row is a candidate of several spans)."""
        if row not in self._neighbour_sets:
            related = self.related
            self._neighbour_sets[row] = frozenset(related.indices[related.indptr[row]:related.indptr[row + 1]].tolist())
        return self._neighbour_sets[row]

    def readings(self, start: int, end: int) -> dict[int, _Reading]:
        """Each candidate's best reading of a character span."""
        return span_readings(self.passages, *self.document.span_pieces(start, end))

    def span_candidates(self, start: int, end: int, readings: dict[int, _Reading], rows: Sequence[int] | None, *,
                        other_candidates: Sequence[set[int]]) -> SpanCandidates:
        """The feature rows of a span's candidates: all candidates read over it (`rows` None, a given span) or
        those of `rows` (a found span), with their `readings`. `other_candidates` holds the other spans' likeliest
        candidates (coherence)."""
        document = self.document
        chosen = [row for row in (readings if rows is None else rows)
                  if row in readings and readings[row].passages]
        surface = document.text[start:end]
        counts = self.knowledge.priors.lookup(surface)
        own = self.held_out.get(name_key(surface), {})
        linked = np.maximum(counts.linked - np.array([own.get(r, 0) for r in counts.rows.tolist()], dtype=np.int32), 0)
        counts = dataclasses.replace(counts, linked=linked)
        linked_of = dict(zip(counts.rows.tolist(), counts.linked.tolist()))
        described_of = dict(zip(counts.rows.tolist(), counts.described.tolist()))
        name_links, name_descriptions = int(counts.linked.sum()), int(counts.described.sum())
        # ranked by what counts them: a title's own name at count 0 ranks no entry first (it outweighed the reader)
        order = np.lexsort((-counts.described, -counts.linked))
        counted = (counts.linked + counts.described)[order] > 0
        prior_order = {row: rank for rank, row in enumerate(counts.rows[order][counted].tolist())}
        scores = sorted((readings[row].score for row in chosen), reverse=True)
        surface_key = name_key(surface)
        surface_words = [w.casefold() for w in WORD.findall(surface)]
        other_linked = [link for link in self.linked if not (link.start < end and start < link.end)]
        other_entities = {link.entity for link in other_linked}
        in_links = self.knowledge.in_links
        matrix = np.zeros((len(chosen), len(FEATURES)), dtype=np.float32)
        text = document.text
        for i, row in enumerate(chosen):
            reading = readings[row]
            others = other_entities - {row}
            neighbours = self._neighbours(row)
            related = len(neighbours & others)
            title = self.titles[row]
            base = without_qualifier(title)
            title_words = [w.casefold() for w in WORD.findall(base.split(",")[0])]
            values = {
                "score": reading.score, "log_score": math.log(max(reading.score, 1e-12)),
                "p_rerank": reading.p_rerank, "p_span": reading.p_span, "rerank_logit": reading.rerank_logit,
                "no_mention": reading.no_mention, "rank": scores.index(reading.score) if reading.passages else 99,
                "margin": reading.score - (scores[1] if reading.score == scores[0] and len(scores) > 1 else scores[0]),
                "passages": reading.passages, "title_only_score": reading.title_only_score,
                "title_only_rerank_logit": reading.title_only_rerank_logit,
                "retrieval_rank": reading.retrieval_rank, "added": float(reading.retrieval_rank >= self.top_k),
                "p_linked": linked_of.get(row, 0) / name_links if name_links else 0.0,
                "linked": math.log1p(linked_of.get(row, 0)), "name_links": math.log1p(name_links),
                "p_described": described_of.get(row, 0) / name_descriptions if name_descriptions else 0.0,
                "described_by_name": math.log1p(described_of.get(row, 0)),
                "name_descriptions": math.log1p(name_descriptions), "prior_rank": prior_order.get(row, 99),
                "in_links": math.log1p(int(in_links[row])), "described": float(self.described[row]),
                "exact": float(surface == title), "folded": float(surface_key == name_key(title)),
                "base": float(surface_key in (name_key(base), name_key(base.split(",")[0]))),
                "qualified": float(base != title), "comma": float("," in base),
                "words_in_title": (sum(w in title_words for w in surface_words) / len(surface_words)
                                   if surface_words else 0.0),
                "title_words_in_text": (sum(w in surface_words for w in title_words) / len(title_words)
                                        if title_words else 0.0),
                "last_word": float(len(title_words) > 1 and surface_words == title_words[-1:]),
                "first_word": float(len(title_words) > 1 and surface_words == title_words[:1]),
                "acronym": float(_is_acronym(surface, title_words)),
                "span_words": len(surface_words), "title_words": len(title_words),
                "same_elsewhere": sum(link.entity == row for link in other_linked),
                "named_in_full": float(any(link.entity == row and link.end - link.start > end - start
                                           for link in other_linked)),
                "related_links": related, "related_share": related / len(others) if others else 0.0,
                "related_spans": sum(not neighbours.isdisjoint(c) for c in other_candidates),
                "candidate_spans": len(other_candidates),
                "given": float(document.given is not None), "upper_text": self.upper_text,
                "log_length": self.log_length, "span_upper": float(surface.isupper()),
                "span_lower": float(surface[:1].islower()), "in_longer_name": float(_in_longer_name(text, start, end)),
            }
            matrix[i] = [values[name] for name in FEATURES]
        return SpanCandidates(start, end, np.array(chosen, dtype=np.int64), matrix)


def _is_acronym(surface: str, title_words: Sequence[str]) -> bool:
    letters = surface.replace(".", "")
    return (len(title_words) >= 2 and 2 <= len(letters) <= 6 and letters.isupper() and letters.isalpha()
            and letters.casefold() == "".join(w[0] for w in title_words if w not in ("of", "the", "and", "for")))


def _in_longer_name(text: str, start: int, end: int) -> bool:
    """A capitalised word right before or after the span, spaces apart."""
    after = re.match(r"[ \t]+(\w)", text[end:end + 3])
    before = re.search(r"(\w)[ \t]+$", text[max(0, start - 3):start])
    return bool(after and after.group(1).isupper()) or bool(before and before.group(1).isupper()
                                                            and not _sentence_start(text, start - len(before.group(0))))


def _sentence_start(text: str, position: int) -> bool:
    word = position
    while word > 0 and not text[word - 1].isspace():
        word -= 1
    before = text[:word].rstrip()
    return not before or before[-1] in ".!?\n"


def document_candidates(document: Document, titles: Sequence[str], described: np.ndarray, knowledge: Knowledge, *,
                        top_k: int, threshold: float, found_threshold: float, top_spans: int, max_span_len: int,
                        held_out: Mapping[str, Mapping[int, int]] | None = None) -> list[SpanCandidates]:
    """Every span's candidates with their features: the given spans (D2KB), or the spans decoding finds at the
    bar `found_threshold` (A2KB), each with the candidates that found it. `held_out` (training only): links left
    out of the name priors' training counts (the document's block's, `annotator.decision.training.held_out_links`),
    so that its names are as new to the priors as a new text's."""
    context = FeatureContext(document, titles, described, knowledge, top_k=top_k, threshold=threshold,
                             held_out=held_out)
    if document.given is not None:
        spans: list[tuple[int, int, set[int] | None]] = [(start, end, None) for start, end in document.given]
    else:
        spans = [(start, end, rows) for (start, end), rows in sorted(found_spans(
            document, top_spans=top_spans, max_span_len=max_span_len, threshold=found_threshold).items())]
    readings = [context.readings(start, end) for start, end, _ in spans]
    likeliest = [set(sorted((r for r in (reading if rows is None else rows) if r in reading),
                            key=lambda r: -reading[r].score)[:COHERENCE_CANDIDATES])
                 for (_, _, rows), reading in zip(spans, readings)]
    return [context.span_candidates(start, end, reading, rows,
                                    other_candidates=[c for j, c in enumerate(likeliest) if j != i])
            for i, ((start, end, rows), reading) in enumerate(zip(spans, readings))]
