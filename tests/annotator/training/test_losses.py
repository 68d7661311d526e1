from __future__ import annotations

import torch
from torch.nn import functional as F

from annotator.training.losses import multilabel_nce_loss, nce_allowed, reader_loss


def test_nce_never_puts_a_gold_among_its_own_negatives():
    generator = torch.Generator().manual_seed(0)
    gold_mask = torch.rand(6, 20, generator=generator) < 0.3
    gold_mask[:, 0] = True  # every passage has at least one gold
    pair_passage, pair_entity = gold_mask.nonzero(as_tuple=True)
    allowed = nce_allowed(gold_mask, pair_passage, pair_entity)
    for row, (p, e) in enumerate(zip(pair_passage.tolist(), pair_entity.tolist())):
        golds = set(gold_mask[p].nonzero().flatten().tolist())
        columns = set(allowed[row].nonzero().flatten().tolist())
        assert e in columns
        assert columns & golds == {e}
        assert columns == (set(range(20)) - golds) | {e}


def test_multilabel_nce_is_one_softmax_per_gold():
    passages, entities = F.normalize(torch.randn(2, 4), dim=-1), F.normalize(torch.randn(5, 4), dim=-1)
    gold_mask = torch.tensor([[1, 1, 0, 0, 0], [0, 0, 1, 0, 0]], dtype=torch.bool)
    scores = 10 * passages @ entities.T
    expected = -torch.stack([
        scores[0, 0] - torch.logsumexp(scores[0, [0, 2, 3, 4]], 0),
        scores[0, 1] - torch.logsumexp(scores[0, [1, 2, 3, 4]], 0),
        scores[1, 2] - torch.logsumexp(scores[1, [0, 1, 2, 3, 4]], 0)]).mean()
    assert torch.allclose(multilabel_nce_loss(passages, entities, gold_mask, scale=10.0), expected)


def test_replaced_columns_score_as_if_their_rows_were_swapped():
    passages, entities = F.normalize(torch.randn(2, 4), dim=-1), F.normalize(torch.randn(6, 4), dim=-1)
    gold_mask = torch.tensor([[1, 0, 0, 1, 0, 0], [0, 0, 1, 1, 0, 0]], dtype=torch.bool)
    columns, vectors = torch.tensor([3, 5]), F.normalize(torch.randn(2, 4), dim=-1)
    swapped = entities.clone()
    swapped[columns] = vectors
    replaced = multilabel_nce_loss(passages, entities, gold_mask, scale=10.0, replaced=(columns, vectors))
    assert torch.allclose(replaced, multilabel_nce_loss(passages, swapped, gold_mask, scale=10.0))
    assert not torch.allclose(replaced, multilabel_nce_loss(passages, entities, gold_mask, scale=10.0))


def test_reader_loss_targets_cls_for_non_gold_and_ignores_positions_outside_the_passage():
    pairs, width = 2, 6  # one passage, K = 2: candidate 0 gold at (2, 3), candidate 1 not
    start, end = torch.randn(pairs, width), torch.randn(pairs, width)
    rerank = torch.randn(pairs)
    span_mask = torch.arange(width).unsqueeze(0) <= 3  # [CLS] + 3 passage wordpieces
    loss = reader_loss(start, end, rerank, span_mask=span_mask.expand(pairs, width),
                       is_gold=torch.tensor([[True, False]]), span_pair=torch.tensor([0, 1]),
                       span_start=torch.tensor([2, 0]), span_end=torch.tensor([3, 0]))
    log_start, log_end = F.log_softmax(start[:, :4], -1), F.log_softmax(end[:, :4], -1)
    expected = -(F.log_softmax(rerank, 0)[0] + log_start[0, 2] + log_end[0, 3] + log_start[1, 0] + log_end[1, 0])
    assert torch.allclose(loss, expected)
    # Logits beyond the passage do not matter.
    start[:, 4:] += 100.0
    again = reader_loss(start, end, rerank, span_mask=span_mask.expand(pairs, width),
                        is_gold=torch.tensor([[True, False]]), span_pair=torch.tensor([0, 1]),
                        span_start=torch.tensor([2, 0]), span_end=torch.tensor([3, 0]))
    assert torch.allclose(loss, again)


def test_excluded_columns_are_nobody_s_negatives_but_stay_their_golds():
    gold_mask = torch.tensor([[1, 0, 0, 0], [0, 1, 0, 0]], dtype=torch.bool)
    excluded = torch.tensor([[0, 0, 1, 0], [1, 0, 0, 0]], dtype=torch.bool)
    pair_passage, pair_entity = gold_mask.nonzero(as_tuple=True)
    allowed = nce_allowed(gold_mask, pair_passage, pair_entity, excluded)
    assert allowed.tolist() == [[True, True, False, True], [False, True, True, True]]
