"""Bench: int8 (`cpu_int8`) against full precision on the CPU, on the same KB and documents.

Prints: KB encoding speed of fp32, torch's int8 copy and the ONNX Runtime int8 entity tower (what
`cpu_int8` encodes a KB with) and the cosine of their entity vectors to fp32 (a random sample of the KB);
dev retriever recall with fp32 vs ONNX Runtime int8 entity vectors (passages fp32, as the linker runs); and the
reader's speed and InKB F1 (strong match) on the first N documents with an fp32, a torch int8 and an ONNX
Runtime int8 reader (the last is what `cpu_int8` runs).
Figures are printed, never asserted.

    python -m bench.int8_check --kb ~/.cache/entqa/eval_kb_dev_20k.jsonl.gz \
        --dataset ../shared/data/aida/dev.ttl --docs 10 --k 20
"""
from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path

import numpy as np
import torch

from annotator.onnx_int8 import OnnxInt8EntityEncoder, OnnxInt8Reader
from annotator.pipeline import Linker
from annotator.quantization import int8_copy
from annotator.training.data import TitleLookup, build_documents, load_kb, read_nif_corpus
from annotator.training.evaluation import RECALL_AT, evaluate_linker, per_document, retrieval_recall
from annotator.training.loop import encode, top_k

REPOSITORY = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPOSITORY / "models" / "entqa-minilm"), help="checkpoint folder")
    parser.add_argument("--kb", required=True, help="KB file (small enough to encode twice)")
    parser.add_argument("--dataset", required=True, help="NIF corpus with gold annotations")
    parser.add_argument("--docs", type=int, default=10, help="documents linked by each reader")
    parser.add_argument("--k", type=int, default=20, help="candidates per passage")
    parser.add_argument("--sample", type=int, default=2000, help="KB entities timed for the encoding speed")
    args = parser.parse_args()

    linker = Linker.from_pretrained(args.model, kb_path=args.kb, config_overrides={"cpu_int8": False, "top_k": args.k})
    batch_size, device = linker.config.retriever_batch_size, linker.device
    entity_ids = linker.index.entity_token_ids(range(len(linker.index)))
    onnx_int8 = OnnxInt8EntityEncoder(linker.retriever, linker.builder)

    sample = np.sort(np.random.default_rng(0).choice(len(entity_ids), min(args.sample, len(entity_ids)), replace=False))
    timed = {}
    for name, encoder in (("fp32", linker.retriever), ("torch int8", int8_copy(linker.retriever)),
                          ("onnxruntime int8", onnx_int8)):
        with torch.inference_mode():
            # One entity first, so one-time costs (the ONNX export and quantization) stay off the clock.
            encoder.embed_entities(linker.builder.pad([entity_ids[sample[0]]]).to(encoder.device))
            started = time.perf_counter()
            timed[name] = encode(encoder.embed_entities, linker.builder, [entity_ids[i] for i in sample],
                                 batch_size=batch_size, device=encoder.device, desc=f"encode {name}")
        print(f"KB encoding {name}: {len(sample) / (time.perf_counter() - started):.1f} entities/s "
              f"({len(sample)} random entities, mean {np.mean([len(entity_ids[i]) for i in sample]):.1f} wordpieces)")
        cosine = torch.nn.functional.cosine_similarity(timed["fp32"], timed[name]).numpy()
        print(f"cosine {name} vs fp32 entity vectors: mean {cosine.mean():.4f}, "
              f"1st percentile {np.percentile(cosine, 1):.4f}")

    kb = load_kb(args.kb)
    corpus = read_nif_corpus(args.dataset)
    documents = build_documents(corpus, linker.builder, TitleLookup(kb))
    with torch.inference_mode():
        passages = encode(linker.retriever.embed_passages, linker.builder,
                          [p.input_ids for d in documents for p in d.passages], batch_size=batch_size,
                          device=device, desc="encode passages")
        entities = {"fp32": torch.from_numpy(np.asarray(linker.index.embeddings, dtype=np.float32)),
                    "onnxruntime int8": encode(onnx_int8.embed_entities, linker.builder, entity_ids,
                                               batch_size=batch_size, device=onnx_int8.device, desc="encode KB int8")}
    for name, vectors in entities.items():
        ranked = per_document(documents, top_k(passages, vectors, max(RECALL_AT)).tolist())
        metrics = retrieval_recall(documents, ranked, kb)
        print(f"recall, {name} entity vectors, {len(documents)} docs: "
              + ", ".join(f"{key} {value:.2f}" for key, value in metrics.items()))

    linked = documents[: args.docs]
    torch_linker, onnx_linker = copy.copy(linker), copy.copy(linker)
    torch_linker.reader = int8_copy(linker.reader)
    onnx_linker.reader = OnnxInt8Reader(linker.reader, linker.builder)
    for name, candidate in (("fp32", linker), ("torch int8", torch_linker), ("onnxruntime int8", onnx_linker)):
        candidate.link(linked[0].text)  # one-time costs off the clock
        started = time.perf_counter()
        scores = evaluate_linker(candidate, linked)
        print(f"reader {name}, first {len(linked)} docs, K={args.k}: {(time.perf_counter() - started) / len(linked):.2f} "
              f"s/doc, P {scores['precision']:.2f} R {scores['recall']:.2f} F1 {scores['f1']:.2f}")


if __name__ == "__main__":
    main()
