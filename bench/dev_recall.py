"""Bench: the retriever's recall on a NIF corpus against a built entity index (any KB size, no re-encoding).

Passages are cut and encoded as the linker does, searched in the KB's entity index (the same faiss call
as in `Linker`), and scored with `annotator.training.evaluation.retrieval_recall`: passage- and
document-level R@k for the cut-offs of `--at` (default 1, 10, 100; add the linker's K to see the share of
golds its reader can reach), and R@max split by title-only vs described gold entities. Gold titles are
looked up in the KB as in training; the lookup report says how many are missing.

    python -m bench.dev_recall --kb ../shared/data/kb/entities.jsonl.gz --dataset ../shared/data/aida/dev.ttl
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from annotator.pipeline.linker import Linker
from annotator.training.data import TitleLookup, build_documents, load_kb
from annotator.training.evaluation import RECALL_AT, retrieval_recall
from entqa.corpora import read_corpus

REPOSITORY = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPOSITORY / "models" / "entqa-minilm"), help="checkpoint folder")
    parser.add_argument("--kb", required=True, help="KB file (its index is read from --index-dir or the cache)")
    parser.add_argument("--index-dir", help="prebuilt entity index of the KB (default: the cache's)")
    parser.add_argument("--dataset", required=True, help="NIF corpus with gold annotations")
    parser.add_argument("--docs", type=int, help="only the first N documents")
    parser.add_argument("--at", type=int, nargs="+", default=list(RECALL_AT), help="recall cut-offs")
    parser.add_argument("--out", help="write the figures to this JSON file")
    parser.add_argument("--queries-out", help="write the passage vectors (float32 .npy), e.g. for "
                                              "bench.index_scaling --query-vectors")
    args = parser.parse_args()

    linker = Linker.from_pretrained(args.model, kb_path=args.kb, index_dir=args.index_dir)
    kb = load_kb(args.kb)
    lookup = TitleLookup(kb)
    documents = build_documents(read_corpus(Path(args.dataset), documents=args.docs), linker.builder, lookup)
    started = time.perf_counter()
    ranked, queries = [], []
    with torch.inference_mode():
        for document in tqdm(documents, desc="retrieving", unit="doc"):
            inputs = [passage.input_ids for passage in document.passages]
            vectors = linker.retrieval.retriever.embed_passages(linker.builder.pad(inputs).to(linker.device)).float()
            queries.append(vectors.cpu().numpy())
            _, rows = linker.index.search(queries[-1], max(args.at))
            ranked.append([r[r >= 0].tolist() for r in rows])
    seconds = time.perf_counter() - started
    metrics = retrieval_recall(documents, ranked, kb, ks=sorted(args.at))
    print(lookup.report())
    print(f"{len(documents)} documents, {sum(len(d.passages) for d in documents)} passages, {len(kb):,} entities "
          f"({linker.describe()['index']} index), {seconds:.1f} s")
    for name, value in metrics.items():
        print(f"  {name:<28} {value:6.2f}")
    if args.queries_out:
        np.save(args.queries_out, np.concatenate(queries))
    if args.out:
        Path(args.out).write_text(json.dumps({"dataset": args.dataset, "documents": len(documents), "kb": args.kb,
                                              "entities": len(kb), "seconds": seconds, "lookup": lookup.report(),
                                              "metrics": metrics}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
