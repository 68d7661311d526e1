"""Bench: where the real linker's time goes, per document, on the device it runs on (a GPU where there is one).

The dataset's first documents are linked in process after a warm-up, several times over: timed alone (ms/doc
mean, p50, p95), then again (the same documents, their shapes seen: what a pass pays per new shape is the
difference), under cProfile (the `annotator/` functions by cumulative time; each stage ends by copying its results
to the host, so on a GPU a stage's waits land in that stage), and under torch.profiler (the operators and kernels
that took longest, on the CPU and, on a GPU, on the device). `--cudnn-attention` then times them alone and again
with PyTorch's own choice of attention kernels (cuDNN's first on an H100/H200) instead of the encoders'
(annotator/model/attention.py), `--without-shape-buckets` with a GPU's passes at their own shapes instead of padded
to a few (`Batch.padded_to_buckets`), and `--compile MODE ...` with the reader under `torch.compile` in each mode
("reduce-overhead" replays CUDA graphs, the remedy for launch-bound passes), with how many documents kept the eager
linker's mentions. What it found on an H200: docs/decisions.md#gpu-request-profile. Figures are printed, never
asserted.

    python -m bench.profile_linker --model models/entqa-minilm --kb ../shared/data/kb/entities.jsonl.gz \
        --dataset ../shared/data/aida/dev.ttl --docs 40 --k 100 --cudnn-attention --without-shape-buckets \
        --compile default reduce-overhead
"""
from __future__ import annotations

import argparse
import dataclasses
import cProfile
import os
import pstats
import time
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

import torch
from torch.nn.attention import SDPBackend
from torch.profiler import ProfilerActivity, profile

from annotator.model import attention
from annotator.model.tokenization import Batch
from annotator.pipeline.linker import Linker
from annotator.settings import settings_from_variables
from bench.e2e_http import REPOSITORY, with_top_k
from bench.host_overhead import summary
from gerbil.datasets import load_dataset


def stage_table(stats: pstats.Stats, documents: int, *, top: int, package: str = "annotator") -> str:
    """The `package`'s functions by cumulative time per document, costliest first, one line each."""
    rows = sorted(((cumulative, calls, f"{_within(file, package)}:{line} {name}")
                   for (file, line, name), (_, calls, _, cumulative, _) in stats.stats.items()
                   if package in Path(file).parts[:-1]), reverse=True)
    lines = [f"{'ms/doc':>9} {'calls':>7}  {package}/ function (cumulative)"]
    lines += [f"{1000 * seconds / documents:9.2f} {calls:7d}  {where}" for seconds, calls, where in rows[:top]]
    return "\n".join(lines)


def _within(file: str, package: str) -> str:
    """`file`'s path from the (last) `package` folder on, e.g. annotator/pipeline/linker.py."""
    parts = Path(file).parts
    first = len(parts) - 1 - parts[::-1].index(package)
    return "/".join(parts[first:])


def link_all(linker: Linker, texts: Sequence[str]) -> list[float]:
    """Seconds per document, each linked alone (as GERBIL sends them); `link` returns only after its last
    device results reached the host, so no extra synchronisation is needed."""
    seconds = []
    for text in texts:
        started = time.perf_counter()
        linker.link(text)
        seconds.append(time.perf_counter() - started)
    return seconds


def links(linker: Linker, text: str) -> list[tuple[int, int, str | None]]:
    """The spans and entities `linker` gives `text` (scores left out: a compiled pass may round otherwise)."""
    return [(mention.start, mention.end, mention.title) for mention in linker.link(text)]


def with_compiled_reader(linker: Linker, mode: str) -> Linker:
    """`linker` whose reader runs under `torch.compile(mode=mode)` (index and towers shared)."""
    reading = linker.reading
    return dataclasses.replace(linker, reading=dataclasses.replace(reading, reader=torch.compile(reading.reader,
                                                                                                 mode=mode)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPOSITORY / "models" / "entqa-minilm"), help="checkpoint folder")
    parser.add_argument("--kb", help="KB file (default: the checkpoint's demo KB; other KBs' index from the cache)")
    parser.add_argument("--dataset", required=True, help="NIF corpus (only its texts are linked)")
    parser.add_argument("--docs", type=int, default=40, help="the first N documents")
    parser.add_argument("--k", type=int, help="candidates per passage (default: the checkpoint's)")
    parser.add_argument("--warmup", type=int, default=3, help="documents linked first, untimed")
    parser.add_argument("--top", type=int, default=25, help="lines in each table")
    parser.add_argument("--compile", nargs="+", default=[], metavar="MODE",
                        choices=["default", "reduce-overhead", "max-autotune"],
                        help="also time the reader under torch.compile in each of these modes")
    parser.add_argument("--cudnn-attention", action="store_true",
                        help="also time the documents with cuDNN's attention allowed (PyTorch's default), twice")
    parser.add_argument("--without-shape-buckets", action="store_true",
                        help="then time the documents alone and again with a GPU's forward passes at their own "
                             "shapes, not padded to the shape buckets: after the bucketed passes, so that the first "
                             "of these two meets shapes not seen in this process (on the CPU nothing is padded)")
    args = parser.parse_args()

    settings = settings_from_variables(os.environ)  # ENTQA_CPU_PRECISION, ... as the service reads them
    linker = Linker.from_pretrained(args.model, kb_path=args.kb, config_overrides=settings.model,
                                    runtime=settings.runtime)
    if args.k is not None:
        linker = with_top_k(linker, args.k)
    if args.compile and not isinstance(linker.reading.reader, torch.nn.Module):
        parser.error(f"--compile needs a torch reader, not {linker.reading.reader.precision} "
                     "(on the CPU: ENTQA_CPU_PRECISION=fp32 or bf16)")
    on_gpu = linker.device.type == "cuda"
    texts = [d.text for d in load_dataset("dataset", args.dataset).documents[: args.docs]]
    link_all(linker, texts[: args.warmup])
    print(f"{len(texts)} documents, K={linker.config.top_k}, {len(linker.index):,} entities, "
          f"{linker.describe()['device']}")

    print(f"alone: {summary(link_all(linker, texts))}")
    print(f"again: {summary(link_all(linker, texts))}")

    stages = cProfile.Profile()
    stages.runcall(link_all, linker, texts)
    print(stage_table(pstats.Stats(stages), len(texts), top=args.top))

    with profile(activities=[ProfilerActivity.CPU, *([ProfilerActivity.CUDA] if on_gpu else [])]) as operators:
        link_all(linker, texts)
    print(operators.key_averages().table(sort_by="self_device_time_total" if on_gpu else "self_cpu_time_total",
                                         row_limit=args.top))

    if args.cudnn_attention:  # before any cuDNN pass in this process, so that its first pass plans every shape
        default = [SDPBackend.CUDNN_ATTENTION, *attention.ATTENTION_BACKENDS]
        with mock.patch.object(attention, "ATTENTION_BACKENDS", default):
            print(f"cuDNN attention allowed, alone: {summary(link_all(linker, texts))}")
            print(f"cuDNN attention allowed, again: {summary(link_all(linker, texts))}")

    if args.without_shape_buckets:
        with mock.patch.object(Batch, "padded_to_buckets", lambda batch, pad_id: batch):
            print(f"shape buckets off, alone: {summary(link_all(linker, texts))}")
            print(f"shape buckets off, again: {summary(link_all(linker, texts))}")

    eager = [links(linker, text) for text in texts] if args.compile else []
    for mode in args.compile:
        compiled = with_compiled_reader(linker, mode)
        # A first pass compiles (and captures CUDA graphs) for each new shape; a server pays that once.
        first = sum(link_all(compiled, texts))
        seconds = link_all(compiled, texts)
        same = sum(links(compiled, text) == expected for text, expected in zip(texts, eager))
        print(f"torch.compile {mode}: {summary(seconds)}; first pass {first:.1f} s; "
              f"the eager spans and entities in {same}/{len(texts)} documents")


if __name__ == "__main__":
    main()
