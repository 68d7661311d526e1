"""The training objectives: multi-label NCE for the retriever (eq. 1) and the reader's objective (eq. 2)."""
from __future__ import annotations

import torch
from torch.nn import functional as F


def nce_allowed(gold_mask: torch.Tensor, pair_passage: torch.Tensor, pair_entity: torch.Tensor,
                excluded: torch.Tensor | None = None) -> torch.Tensor:
    """Which entity columns enter the denominator of each (passage, gold) NCE instance.

    Args:
        gold_mask: (passages, entities) bool, True where the entity is a gold of the passage.
        pair_passage: (pairs,) passage index of each instance.
        pair_entity: (pairs,) entity column of its gold.
        excluded: (passages, entities) bool, True where the entity is no negative of the passage either (a
            name the passage holds without a label).

    Returns:
        (pairs, entities) bool: the instance's own gold and every entity that is neither a gold of its
        passage nor excluded from it. A gold entity is therefore never a negative of its own passage (eq. 1:
        N(E, p) ⊂ E \\ E(p)).
    """
    own = F.one_hot(pair_entity, gold_mask.shape[1]).bool()
    negative = ~gold_mask if excluded is None else ~(gold_mask | excluded)
    return negative[pair_passage] | own


def multilabel_nce_loss(passage_vectors: torch.Tensor, entity_vectors: torch.Tensor, gold_mask: torch.Tensor, *,
                        scale: float, replaced: tuple[torch.Tensor, torch.Tensor] | None = None,
                        excluded: torch.Tensor | None = None) -> torch.Tensor:
    """Multi-label NCE with negatives shared across the batch (eq. 1).

    Every (passage, gold entity) pair is its own softmax instance over that gold and all entity columns
    that are not golds of the passage; the other passages' golds and the sampled negatives serve as
    negatives. Columns must be distinct entities (deduplicated by KB row), so a gold cannot reappear
    as a negative under another column.

    Args:
        passage_vectors: (passages, d).
        entity_vectors: (entities, d).
        gold_mask: (passages, entities) bool.
        scale: multiplies the inner products (a temperature for unit vectors).
        replaced: (columns, vectors): these entity columns are scored against these (len(columns), d) vectors
            instead of their rows of `entity_vectors` (e.g. a gold shown title-only), without copying a large
            `entity_vectors`.
        excluded: (passages, entities) bool: entities that are no negatives of the passage (see `nce_allowed`).

    Returns:
        The mean over instances of -log p(gold).
    """
    pair_passage, pair_entity = gold_mask.nonzero(as_tuple=True)
    logits = scale * passage_vectors @ entity_vectors.T  # (passages, entities)
    if replaced is not None:
        columns, vectors = replaced
        logits = logits.index_copy(1, columns, scale * passage_vectors @ vectors.T)
    allowed = nce_allowed(gold_mask, pair_passage, pair_entity, excluded)
    instance_logits = logits[pair_passage].float().masked_fill(~allowed, float("-inf"))  # (pairs, entities)
    return F.cross_entropy(instance_logits, pair_entity)


def reader_loss(start: torch.Tensor, end: torch.Tensor, rerank: torch.Tensor, *, span_mask: torch.Tensor,
                is_gold: torch.Tensor, span_pair: torch.Tensor, span_start: torch.Tensor,
                span_end: torch.Tensor) -> torch.Tensor:
    """The reader objective (eq. 2), averaged over passages.

    -Σ_gold log p_rerank(e_k) - Σ_(s,t) ∈ M(p, e_k) log p_start(s) p_end(t), where the target spans of
    a non-gold candidate are the single [CLS] span (0, 0).

    Args:
        start: (passages * K, seq_len) start logits of the (passage, candidate) pairs, passage-major.
        end: (passages * K, seq_len) end logits.
        rerank: (passages * K,) rerank logits.
        span_mask: (passages * K, seq_len) bool, True at [CLS] and the passage's wordpieces: the
            positions the start/end softmaxes range over.
        is_gold: (passages, K) bool.
        span_pair: (spans,) pair index of each target span (gold mentions and [CLS] targets).
        span_start: (spans,) start position of each target span in the reader input.
        span_end: (spans,) end position.

    Returns:
        A scalar loss.
    """
    passages, k = is_gold.shape
    log_rerank = F.log_softmax(rerank.float().view(passages, k), dim=-1)
    rerank_term = -(log_rerank * is_gold).sum()
    log_start = F.log_softmax(start.float().masked_fill(~span_mask, float("-inf")), dim=-1)
    log_end = F.log_softmax(end.float().masked_fill(~span_mask, float("-inf")), dim=-1)
    span_term = -(log_start[span_pair, span_start] + log_end[span_pair, span_end]).sum()
    return (rerank_term + span_term) / passages
