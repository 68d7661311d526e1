"""Bench: the retriever's recall on NIF corpora against a built entity index (any KB size, no re-encoding).

Passages are cut and encoded as the linker does, searched in the KB's entity index (the same faiss call
as in `Linker`), and scored with `annotator.training.evaluation.retrieval_recall`: passage- and
document-level R@k for the cut-offs of `--at` (default 1, 10, 100; add the linker's K to see the share of
golds its reader can reach), and R@max split by title-only vs described gold entities. Gold titles are
looked up in the KB as in training; the lookup report says how many are missing. Several datasets share one
load of the KB and its index.

    python -m bench.dev_recall --kb ../shared/data/kb/entities.jsonl.gz --dataset ../shared/data/aida/dev.ttl
"""
from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from annotator.pipeline.linker import Linker
from annotator.training.data import KnowledgeBase, TitleLookup, build_documents, load_kb
from annotator.training.evaluation import RECALL_AT, retrieval_recall
from annotator.cli.corpora import read_corpus

REPOSITORY = Path(__file__).resolve().parents[1]


def dataset_recall(linker: Linker, kb: KnowledgeBase, dataset: Path, *, documents: int | None,
                   at: Sequence[int]) -> tuple[dict, np.ndarray]:
    """One corpus's recall figures (as `--out` writes them) and its passage vectors."""
    lookup = TitleLookup(kb)
    corpus = build_documents(read_corpus(dataset, documents=documents), linker.builder, lookup)
    started = time.perf_counter()
    queries = []
    with torch.inference_mode():
        for document in tqdm(corpus, desc=f"encoding {dataset.stem}", unit="doc"):
            inputs = [passage.input_ids for passage in document.passages]
            vectors = linker.retrieval.retriever.embed_passages(linker.builder.pad(inputs).to(linker.device)).float()
            queries.append(vectors.cpu().numpy())
    vectors = np.concatenate(queries)
    # One search for the whole corpus: a flat index scans the KB once per call, so a call per tweet is slow.
    _, rows = linker.index.search(vectors, max(at))
    ranked = [[r[r >= 0].tolist() for r in document_rows]
              for document_rows in np.split(rows, np.cumsum([len(q) for q in queries])[:-1])]
    seconds = time.perf_counter() - started
    figures = {"dataset": str(dataset), "documents": len(corpus), "passages": len(vectors), "seconds": seconds,
               "lookup": lookup.report(), "metrics": retrieval_recall(corpus, ranked, kb, ks=sorted(at))}
    return figures, vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPOSITORY / "models" / "entqa-minilm"), help="checkpoint folder")
    parser.add_argument("--kb", required=True, help="KB file (its index is read from --index-dir or the cache)")
    parser.add_argument("--index-dir", help="prebuilt entity index of the KB (default: the cache's)")
    parser.add_argument("--dataset", required=True, nargs="+", type=Path, help="NIF corpora with gold annotations")
    parser.add_argument("--docs", type=int, help="only the first N documents of each")
    parser.add_argument("--at", type=int, nargs="+", default=list(RECALL_AT), help="recall cut-offs")
    parser.add_argument("--out", help="write the figures to this JSON file: the KB, then one entry per dataset")
    parser.add_argument("--queries-out", help="write the passage vectors (float32 .npy) of the one dataset, e.g. for "
                                              "bench.index_scaling --query-vectors")
    args = parser.parse_args()
    if args.queries_out and len(args.dataset) > 1:
        parser.error("--queries-out takes the vectors of one --dataset")
    linker = Linker.from_pretrained(args.model, kb_path=args.kb, index_dir=args.index_dir)
    kb = load_kb(args.kb)
    results = []
    for dataset in args.dataset:
        figures, queries = dataset_recall(linker, kb, dataset, documents=args.docs, at=args.at)
        results.append(figures)
        print(f"{dataset}: {figures['lookup']}")
        print(f"{figures['documents']} documents, {figures['passages']} passages, {len(kb):,} entities "
              f"({linker.describe()['index']} index), {figures['seconds']:.1f} s")
        for name, value in figures["metrics"].items():
            print(f"  {name:<28} {value:6.2f}")
        if args.queries_out:
            np.save(args.queries_out, queries)
    if args.out:
        Path(args.out).write_text(json.dumps({"kb": args.kb, "entities": len(kb), "datasets": results}, indent=2)
                                  + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
