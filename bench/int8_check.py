"""Bench: the CPU precisions (`cpu_precision`: ONNX Runtime int8, bf16) against fp32, on the same KB and documents.

Prints: KB encoding speed of fp32, torch's int8 copy, the ONNX Runtime int8 entity tower and a bf16 copy
(the last two are what `cpu_precision` "int8" and "bf16" encode a KB with) and the cosine of their entity
vectors to fp32 (a random sample of the KB); dev retriever recall with fp32, int8 and bf16 entity vectors
(passages fp32, as the linker runs); and the reader's speed and GERBIL's A2KB InKB F1
(`gerbil.experiment.linker_scores`) on the first N documents with each of those readers (`--compile`: also the fp32
and bf16 readers under `torch.compile`).
bf16 is fast only on a CPU with AMX ("auto" picks it there). Figures are printed, never asserted.

    python -m bench.int8_check --kb ~/.cache/entqa/eval_kb_dev_20k.jsonl.gz \
        --dataset ../shared/data/aida/dev.ttl --docs 10 --k 20
"""
from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
import torch

from annotator.model.tokenization import per_document
from annotator.pipeline.linker import Linker
from annotator.runtime.precision import cpu_reader, kb_encoder
from annotator.runtime.quantization import int8_copy
from annotator.runtime.settings import RuntimeSettings
from annotator.training.data import TitleLookup, build_documents, load_kb
from annotator.training.evaluation import RECALL_AT, retrieval_recall
from annotator.training.loop import encode, top_k
from annotator.cli.corpora import corpus_documents, read_dataset
from gerbil.experiment import linker_scores

REPOSITORY = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPOSITORY / "models" / "entqa-minilm"), help="checkpoint folder")
    parser.add_argument("--kb", required=True, help="KB file (small enough to encode twice)")
    parser.add_argument("--dataset", required=True, help="NIF corpus with gold annotations")
    parser.add_argument("--docs", type=int, default=10, help="documents linked by each reader")
    parser.add_argument("--k", type=int, default=20, help="candidates per passage")
    parser.add_argument("--sample", type=int, default=2000, help="KB entities timed for the encoding speed")
    parser.add_argument("--compile", action="store_true", help="also link with the fp32 and bf16 readers under "
                                                               "torch.compile (dynamic shapes)")
    args = parser.parse_args()

    linker = Linker.from_pretrained(args.model, kb_path=args.kb, config_overrides={"top_k": args.k},
                                    runtime=RuntimeSettings(cpu_precision="fp32"))
    batch_size, device = linker.retrieval.batch_size, linker.device
    entity_ids = linker.index.entity_token_ids(range(len(linker.index)))
    precisions = {"onnxruntime int8": "int8", "bf16": "bf16"}
    retriever = linker.retrieval.retriever
    encoders = {"fp32": retriever, "torch int8": int8_copy(retriever),
                **{name: kb_encoder(retriever, linker.builder, precision) for name, precision in precisions.items()}}

    sample = np.sort(np.random.default_rng(0).choice(len(entity_ids), min(args.sample, len(entity_ids)), replace=False))
    timed = {}
    for name, encoder in encoders.items():
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
    dataset = read_dataset(Path(args.dataset))
    documents = build_documents(corpus_documents(dataset.documents), linker.builder, TitleLookup(kb))
    with torch.inference_mode():
        passages = encode(retriever.embed_passages, linker.builder,
                          [p.input_ids for d in documents for p in d.passages], batch_size=batch_size,
                          device=device, desc="encode passages")
        entities = {"fp32": torch.from_numpy(np.asarray(linker.index.embeddings, dtype=np.float32))}
        for name in precisions:
            entities[name] = encode(encoders[name].embed_entities, linker.builder, entity_ids, batch_size=batch_size,
                                    device=encoders[name].device, desc=f"encode KB {name}")
    for name, vectors in entities.items():
        ranked = per_document(top_k(passages, vectors, max(RECALL_AT)).tolist(), documents)
        metrics = retrieval_recall(documents, ranked, kb)
        print(f"recall, {name} entity vectors, {len(documents)} docs: "
              + ", ".join(f"{key} {value:.2f}" for key, value in metrics.items()))

    linked = dataclasses.replace(dataset, documents=dataset.documents[: args.docs])
    reader = linker.reading.reader
    readers = {"fp32": reader, "torch int8": int8_copy(reader),
               **{name: cpu_reader(reader, linker.builder, precision) for name, precision in precisions.items()}}
    if args.compile:
        readers |= {f"{name} torch.compile": torch.compile(readers[name], dynamic=True) for name in ("fp32", "bf16")}
    for name, reader in readers.items():
        candidate = dataclasses.replace(linker, reading=dataclasses.replace(linker.reading, reader=reader))
        started = time.perf_counter()
        candidate.link(linked.documents[0].text)  # one-time costs (export, quantization, compilation) off the clock
        print(f"reader {name}: first document {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        scores = linker_scores(linked, candidate)
        print(f"reader {name}, first {len(linked.documents)} docs, K={args.k}: "
              f"{(time.perf_counter() - started) / len(linked.documents):.2f} "
              f"s/doc, P {scores['precision']:.2f} R {scores['recall']:.2f} F1 {scores['f1']:.2f}")


if __name__ == "__main__":
    main()
