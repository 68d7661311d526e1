"""Bench: what a larger base encoder costs on the CPU: its reader, passage tower and entity tower against MiniLM's.

For each encoder (default: the shipped all-MiniLM-L6-v2, then all-mpnet-base-v2) the reader and the retriever are
built with that encoder's architecture and untrained weights (the speed of dense layers does not depend on their
values, so no training and no checkpoint are needed) and run as the linker runs them: the reader cut to its span
positions (`span_positions_only`) in ONNX Runtime int8 (`cpu_reader`, the serving path) and in fp32; the passage
tower in fp32; the entity tower in int8, as an index build encodes a KB. The inputs are real text in the shipped
settings (`LinkerConfig()`): the dataset's first documents cut into passages of 32 wordpieces with their topic,
each paired with K random entities of the KB (entity inputs up to 64 wordpieces), batched as `BatchedReading`
does (pairs sorted by length, 32 a pass); passages and entities batched by length, 128 a pass. Every figure is
timed once per round for each encoder in turn (the order reversed every other round), so that the ratios hold
on a shared CPU; the median of the rounds is printed.

Printed: per encoder, reader pairs/s (int8, fp32), passages/s, entities/s and the full KB's index build
extrapolated from them; then each figure's ratio to the first encoder's, and what the ratios make of the shipped
pipeline's ms/doc given the shares of it in the reader's passes and in the passage tower (`--reader-share`,
`--passage-share`: from `bench.profile_linker`'s stage table), the rest unchanged. Figures are printed, never asserted.

    python -m bench.encoder_cost --dataset ../shared/data/aida/dev.ttl --reader-share 0.67 --passage-share 0.27
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import AutoConfig

from annotator.model.config import LinkerConfig
from annotator.model.encoders import MINILM, MPNET, encoder_from_config, load_tokenizer, resolve_encoder
from annotator.model.reader import Reader, span_positions_only
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import Batch, InputBuilder, right_padded
from annotator.runtime.onnx_int8 import OnnxInt8EntityEncoder, OnnxInt8Reader
from annotator.runtime.settings import RuntimeSettings
from annotator.training.data import load_kb
from annotator.training.loop import encode
from bench.e2e_http import REPOSITORY
from gerbil.datasets import load_dataset

FIGURES = ("reader int8", "reader fp32", "passage tower", "entity tower int8")
UNITS = {"reader int8": "pairs/s", "reader fp32": "pairs/s", "passage tower": "passages/s",
         "entity tower int8": "entities/s"}
BATCH_SIZE = RuntimeSettings().retriever_batch_size  # texts per retriever pass on the CPU


@dataclass(frozen=True)
class EncoderModels:
    """One base encoder's reader (int8 and fp32), retriever and int8 entity tower, with its inputs."""

    name: str
    parameters: int  # of the reader's encoder
    shortened: bool  # whether the reader's last layer is computed at the span positions only
    attention_fused: bool  # whether the int8 reader's attention is one ONNX Runtime node per layer
    readers: dict[str, Reader | OnnxInt8Reader]  # "int8", "fp32"
    retriever: DualEncoder
    entity_encoder: OnnxInt8EntityEncoder
    builder: InputBuilder
    reader_batches: list[Batch]
    passages: list[list[int]]
    entities: list[list[int]]

    @property
    def pairs(self) -> int:
        return sum(len(batch.input_ids) for batch in self.reader_batches)

    def timed(self, figure: str) -> float:
        """Items per second of one figure (`FIGURES`), on this encoder's inputs."""
        with torch.inference_mode():
            if figure.startswith("reader"):
                reader = self.readers[figure.split()[-1]]
                return self.pairs / _seconds(lambda: [reader(batch) for batch in self.reader_batches])
            embed, items = ((self.retriever.embed_passages, self.passages) if figure == "passage tower"
                            else (self.entity_encoder.embed_entities, self.entities))
            return len(items) / _seconds(lambda: encode(embed, self.builder, items, batch_size=BATCH_SIZE,
                                                        device=torch.device("cpu"), desc=figure))


def _seconds(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def build(name: str, config: LinkerConfig, texts: Sequence[str], titles: Sequence[str], descriptions: Sequence[str],
          *, passages: int, seed: int) -> EncoderModels:
    """The models of encoder `name` (short name or folder) and their inputs: the first `passages` passages of
    `texts`, each paired with `config.top_k` of the entities (`titles`, `descriptions`)."""
    folder = resolve_encoder(name)
    architecture = AutoConfig.from_pretrained(str(folder))
    builder = InputBuilder(load_tokenizer(folder), config)
    torch.manual_seed(seed)
    reader = Reader(encoder_from_config(architecture)).eval()
    leading = span_positions_only(reader, config.passage_len - 1)
    retriever = DualEncoder(encoder_from_config(architecture), encoder_from_config(architecture),
                            normalize=config.normalize, shared_embeddings=config.shared_embeddings).eval()

    passage_inputs = []
    for text in texts:
        document = builder.tokenize_document(text)
        passage_inputs += [builder.passage_input(p, document.topic_ids) for p in builder.split_passages(document)]
        if len(passage_inputs) >= passages:
            break
    passage_inputs = passage_inputs[:passages]
    entity_inputs = builder.entity_inputs(titles, descriptions)
    rng = np.random.default_rng(seed)
    pair_passages = np.repeat(np.arange(len(passage_inputs)), config.top_k)
    chosen = rng.integers(len(entity_inputs), size=len(pair_passages))
    entity_ids, entity_lengths = right_padded(entity_inputs, builder.pad_id)
    batch = builder.reader_batch(passage_inputs, pair_passages, entity_ids[chosen], entity_lengths[chosen])
    # As `BatchedReading` reads them: similar lengths share a pass.
    order = np.argsort(batch.attention_mask.sum(1).numpy(), kind="stable")
    reader_batch_size = RuntimeSettings().reader_batch_size
    reader_batches = [batch.rows(order[first:first + reader_batch_size])
                      for first in range(0, len(order), reader_batch_size)]
    int8 = OnnxInt8Reader(leading, builder)
    return EncoderModels(name=name, parameters=sum(p.numel() for p in reader.encoder.parameters()),
                         shortened=leading is not reader, attention_fused="QAttention" in int8.operators,
                         readers={"int8": int8, "fp32": leading},
                         retriever=retriever, entity_encoder=OnnxInt8EntityEncoder(retriever, builder),
                         builder=builder, reader_batches=reader_batches, passages=passage_inputs,
                         entities=entity_inputs)


def measure(models: Sequence[EncoderModels], rounds: int) -> dict[str, list[float]]:
    """Per figure, the median items/s of each encoder (in the order of `models`) over `rounds`, the encoders
    alternating within each figure."""
    for encoder in models:  # one-time costs (the entity tower's export, first-call allocations) off the clock
        for figure in FIGURES:
            encoder.timed(figure)
    rates: dict[str, list[list[float]]] = {figure: [[] for _ in models] for figure in FIGURES}
    for round_ in range(rounds):
        order = range(len(models)) if round_ % 2 == 0 else range(len(models) - 1, -1, -1)
        for figure in FIGURES:
            for i in order:
                rates[figure][i].append(models[i].timed(figure))
    return {figure: [statistics.median(values) for values in per_model] for figure, per_model in rates.items()}


def report(models: Sequence[EncoderModels], rates: dict[str, list[float]], *, kb_size: int, index_minutes: float,
           ms_per_doc: float, reader_share: float, passage_share: float) -> str:
    """The printed figures: rates, ratios to the first encoder, and what they make of the shipped ms/doc."""
    first = models[0].name
    lines = [f"{m.name}: reader encoder {m.parameters / 1e6:.1f}M parameters, last layer "
             f"{'at the span positions only' if m.shortened else 'at every position'}, int8 attention "
             f"{'fused' if m.attention_fused else 'not fused'}; {m.pairs} pairs "
             f"(mean {np.mean([int(b.attention_mask.sum()) / len(b.input_ids) for b in m.reader_batches]):.1f} "
             f"wordpieces), {len(m.passages)} passages, {len(m.entities)} entities "
             f"(mean {np.mean([len(e) for e in m.entities]):.1f} wordpieces)" for m in models]
    for figure in FIGURES:
        rate = rates[figure]
        lines.append(f"{figure} ({UNITS[figure]}): " + ", ".join(
            f"{m.name} {rate[i]:.1f}" + (f" ({rate[0] / rate[i]:.2f}× {first}'s time)" if i else "")
            for i, m in enumerate(models)))
    entities = rates["entity tower int8"]
    for i, m in enumerate(models):
        lines.append(f"index build of {kb_size:,} entities, {m.name}: {kb_size / entities[i] / 60:.1f} min at this "
                     f"rate (encoding only); {index_minutes * entities[0] / entities[i]:.1f} min scaled from the "
                     f"{index_minutes:g} min measured for {first}")
    rest = ms_per_doc * (1 - reader_share - passage_share)
    for i, m in enumerate(models[1:], start=1):
        reader = ms_per_doc * reader_share * rates["reader int8"][0] / rates["reader int8"][i]
        passages = ms_per_doc * passage_share * rates["passage tower"][0] / rates["passage tower"][i]
        base_reader, base_passages = ms_per_doc * reader_share, ms_per_doc * passage_share
        lines.append(f"shipped pipeline, {ms_per_doc:,.0f} ms/doc ({reader_share:.0%} int8 reader passes, "
                     f"{passage_share:.0%} passage tower): with a {m.name} reader {rest + reader + base_passages:,.0f}"
                     f" ms/doc; with a {m.name} passage tower {rest + base_reader + passages:,.0f} ms/doc; "
                     f"with both {rest + reader + passages:,.0f} ms/doc")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoders", nargs="+", default=[MINILM, MPNET],
                        help="base encoders (short names or folders); ratios are to the first")
    parser.add_argument("--dataset", required=True, help="NIF corpus whose texts give the passages")
    parser.add_argument("--kb", default=str(REPOSITORY / "models" / "entqa-minilm" / "kb" / "entities.jsonl.gz"),
                        help="KB whose random entities are paired with the passages")
    parser.add_argument("--passages", type=int, default=16, help="passages timed (each with K candidates)")
    parser.add_argument("--entities", type=int, default=384, help="random KB entities timed")
    parser.add_argument("--rounds", type=int, default=3, help="timings of each figure per encoder")
    parser.add_argument("--kb-size", type=int, default=1_002_521, help="entities of the KB an index build encodes")
    parser.add_argument("--index-minutes", type=float, default=35.4,
                        help="measured index build of --kb-size entities with the first encoder")
    parser.add_argument("--ms-per-doc", type=float, default=1512.0,
                        help="the shipped pipeline's measured ms/doc on the dataset (first encoder)")
    parser.add_argument("--reader-share", type=float, required=True,
                        help="share of --ms-per-doc in the int8 reader's passes (bench.profile_linker)")
    parser.add_argument("--passage-share", type=float, required=True,
                        help="share of --ms-per-doc in the passage tower (bench.profile_linker)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    config = LinkerConfig()
    texts = [document.text for document in load_dataset("dataset", args.dataset).documents]
    kb = load_kb(args.kb)
    sample = np.sort(np.random.default_rng(args.seed).choice(len(kb.titles), min(args.entities, len(kb.titles)),
                                                             replace=False))
    titles, descriptions = [kb.titles[i] for i in sample], [kb.texts[i] for i in sample]
    models = [build(name, config, texts, titles, descriptions, passages=args.passages, seed=args.seed)
              for name in args.encoders]
    print(f"torch threads {torch.get_num_threads()}, K={config.top_k}, {args.rounds} rounds, "
          f"dataset {Path(args.dataset).name} ({len(texts)} documents), KB {Path(args.kb).name}")
    rates = measure(models, args.rounds)
    print(report(models, rates, kb_size=args.kb_size, index_minutes=args.index_minutes, ms_per_doc=args.ms_per_doc,
                 reader_share=args.reader_share, passage_share=args.passage_share))


if __name__ == "__main__":
    main()
