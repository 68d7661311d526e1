"""Dev evaluation: retriever recall at passage and document level; the linker to score end to end.

Linking scores are GERBIL's: the command line passes them in as a `LinkingScores` (`gerbil.experiment.linker_scores`),
so that a trainer reports what `python -m gerbil.run` would print for its checkpoint.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import torch

from annotator.linking import EntityLinker
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import InputBuilder, per_document
from annotator.training.data import KnowledgeBase, TrainingDocument
from annotator.training.loop import encode, top_k

RECALL_AT = (1, 10, 100)

# A linker's dev scores in percent, "f1" among them.
LinkingScores = Callable[[EntityLinker], Mapping[str, float]]


def retrieval_recall(documents: Sequence[TrainingDocument], ranked: Sequence[Sequence[Sequence[int]]], kb: KnowledgeBase,
                     *, ks: Sequence[int] = RECALL_AT) -> dict[str, float]:
    """Recall@k of ranked KB rows (percentages).

    Passage level: share of (passage, gold entity) pairs whose entity is in the passage's top k.
    Document level: share of (document, gold entity) pairs whose entity is in the union of the top k
    of the document's passages. R@100 is also split by whether the gold entity is title-only, to see
    whether the model prefers either kind.

    Args:
        documents: the evaluated documents.
        ranked: per document, per passage, KB rows best first (at least max(ks) of them where possible).
        kb: the KB the rows index (for the title-only split).
        ks: the cut-offs.

    Returns:
        {"passage_R@k", "document_R@k", "passage_R@{max}_title_only", "passage_R@{max}_described"}.
    """
    hits = {("passage", k): 0 for k in ks} | {("document", k): 0 for k in ks}
    split = {True: [0, 0], False: [0, 0]}  # title-only? -> [hits at max k, pairs]
    pairs = doc_pairs = 0
    for document, passages in zip(documents, ranked):
        union = {k: set() for k in ks}
        for passage, rows in zip(document.passages, passages):
            for k in ks:
                union[k].update(rows[:k])
            for gold in passage.gold_rows:
                pairs += 1
                for k in ks:
                    hits["passage", k] += gold in rows[:k]
                kind = split[not kb.texts[gold]]
                kind[0] += gold in rows[:max(ks)]
                kind[1] += 1
        for gold in document.gold_rows:
            doc_pairs += 1
            for k in ks:
                hits["document", k] += gold in union[k]
    metrics = {f"{level}_R@{k}": 100 * n / max(pairs if level == "passage" else doc_pairs, 1)
               for (level, k), n in hits.items()}
    metrics[f"passage_R@{max(ks)}_title_only"] = 100 * split[True][0] / max(split[True][1], 1)
    metrics[f"passage_R@{max(ks)}_described"] = 100 * split[False][0] / max(split[False][1], 1)
    return metrics


def rank_passages(retriever: DualEncoder, builder: InputBuilder, documents: Sequence[TrainingDocument],
                  kb: KnowledgeBase, rows: Sequence[int], *, k: int, batch_size: int, device: torch.device,
                  entity_vectors: torch.Tensor | None = None) -> list[list[list[int]]]:
    """Top-k KB rows (exact search over `rows`) of every passage, per document, per passage.

    `entity_vectors` are the vectors of `rows` when already known (a built index's); else they are encoded.
    """
    if entity_vectors is None:
        entity_vectors = encode(retriever.embed_entities, builder,
                                builder.entity_inputs([kb.titles[r] for r in rows], [kb.texts[r] for r in rows]),
                                batch_size=batch_size, device=device, desc="encode entities")
    passages = [p for d in documents for p in d.passages]
    passage_vectors = encode(retriever.embed_passages, builder, [p.input_ids for p in passages],
                             batch_size=batch_size, device=device, desc="encode passages")
    row_of = torch.as_tensor(rows)
    return per_document(row_of[top_k(passage_vectors, entity_vectors, k)].tolist(), documents)


def evaluate_retriever(retriever: DualEncoder, builder: InputBuilder, documents: Sequence[TrainingDocument],
                       kb: KnowledgeBase, rows: Sequence[int], *, batch_size: int, device: torch.device,
                       entity_vectors: torch.Tensor | None = None) -> dict[str, float]:
    """Passage- and document-level R@1/10/100 over an index of the KB `rows` (dev golds + distractors, or all),
    with the `entity_vectors` of `rows` when already known."""
    ranked = rank_passages(retriever, builder, documents, kb, rows, k=max(RECALL_AT), batch_size=batch_size,
                           device=device, entity_vectors=entity_vectors)
    return retrieval_recall(documents, ranked, kb)


def pipeline_linker(checkpoint: Path, kb_path: Path, *, top_k: int) -> EntityLinker:
    """The inference pipeline's linker over a checkpoint and KB file, for the end-to-end dev evaluation.

    `top_k` overrides the checkpoint's K: the reader reads K candidates per passage, the CPU cost of a dev pass.
    """
    from annotator.pipeline.linker import Linker  # torch, faiss and the KB index: only when a reader is evaluated

    return Linker.from_pretrained(checkpoint, kb_path=kb_path, config_overrides={"top_k": top_k})
