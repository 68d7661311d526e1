"""Bench: a request's own time, outside the two encoders, per document, for several K.

On a GPU both encoders take a few milliseconds per document; what is left is host work: the NIF request
parsed and the answer written, tokenizing, passages, the entity search, gathering the candidates' stored ids,
building the reader batch, decoding, merging and the second stage. Here both encoders are replaced by
stand-ins that return random outputs of the right shapes at once, and the dataset's documents are sent, as
GERBIL sends them (A2KB), through the service's WSGI route in process (no socket), so the times printed are
the pipeline's and the route's own: a floor under a GPU's ms/doc on this host. The random passage vectors
draw random candidates (half of them title-only, so shorter than real ones); the random logits are spread so
that about as many mentions are linked as by the real reader, which keeps decoding, merging and the second
stage about as busy. Batches are the GPU's (`gpu_batch_size`). Printed per K: the linker's time, the route's
(linker + NIF parse and write) and a client's parse of the answer. Figures are printed, never asserted.

    python -m bench.host_overhead --dataset ../shared/data/aida/dev.ttl --docs 216 --k 20 50 100

The default KB is the checkpoint's demo KB, whose exact search is cheap on a CPU; on a GPU, searching the
1M-entity KB takes about 1.4 ms per document (docs/decisions.md#gpu-host-work).
"""
from __future__ import annotations

import argparse
import cProfile
import dataclasses
import pstats
import time
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from annotator.data_types import Mention
from annotator.linking import Span
from annotator.pipeline.linker import Linker
from annotator.model.reader import ReaderLogits
from annotator.model.tokenization import Batch
from annotator.runtime.settings import RuntimeSettings
from bench.e2e_http import REPOSITORY, with_top_k
from gerbil.client import HEADERS, REQUEST_URI, Task, reduce_document
from gerbil.datasets import load_dataset
from nif import parse_document, write_document
from annotator.service import create_app


# Normal logits times 2 link 32 mentions in AIDA-A's first 5 documents at K=100; the shipped reader links 43
# (times 1: none, 2.5: 73).
LOGIT_SCALE = 2.0


class RandomReader(nn.Module):
    """Reader stand-in: random start/end/rerank logits, no encoder."""

    precision = "random"  # what /health names

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.generator = torch.Generator().manual_seed(seed)

    def forward(self, batch: Batch) -> ReaderLogits:
        pairs, length = batch.input_ids.shape
        start, end = LOGIT_SCALE * torch.randn(2, pairs, length, generator=self.generator)
        return ReaderLogits(start, end, LOGIT_SCALE * torch.randn(pairs, generator=self.generator))


class RandomPassageTower(nn.Module):
    """Retriever stand-in for requests: random unit passage vectors of the index's dimension."""

    def __init__(self, dim: int, seed: int) -> None:
        super().__init__()
        self.dim = dim
        self.generator = torch.Generator().manual_seed(seed)

    def embed_passages(self, batch: Batch) -> torch.Tensor:
        vectors = torch.randn(batch.input_ids.shape[0], self.dim, generator=self.generator)
        return vectors / vectors.norm(dim=1, keepdim=True)


class TimedLinker:
    """Passes `link` calls on to a linker and records how long each took, under `profile` if one is set (the
    service links on its model thread, which a profile of the request would not see)."""

    def __init__(self, linker: Linker) -> None:
        self.linker = linker
        self.seconds: list[float] = []
        self.profile: cProfile.Profile | None = None

    def link(self, text: str, spans: Sequence[Span] | None = None) -> list[Mention]:
        started = time.perf_counter()
        mentions = (self.profile.runcall(self.linker.link, text, spans) if self.profile
                    else self.linker.link(text, spans))
        self.seconds.append(time.perf_counter() - started)
        return mentions

    def describe(self) -> dict[str, str]:
        return self.linker.describe()


def with_stand_ins(linker: Linker, *, batch_size: int) -> Linker:
    """`linker` with both encoders replaced by the stand-ins wherever a stage reads, in batches of `batch_size` pairs
    or passages (a GPU's: one reader pass per document)."""
    reader = RandomReader(seed=0)
    return dataclasses.replace(
        linker, retrieval=dataclasses.replace(linker.retrieval, retriever=RandomPassageTower(linker.index.dim, seed=0),
                                              batch_size=batch_size),
        reading=dataclasses.replace(linker.reading, reader=reader, batch_size=batch_size),
        # a post-processor with a reading of its own (the title-only look) reads the stand-in too
        post_processors=[dataclasses.replace(stage, reading=dataclasses.replace(stage.reading, reader=reader,
                                                                                batch_size=batch_size))
                         if hasattr(stage, "reading") else stage for stage in linker.post_processors])


def summary(seconds: Sequence[float]) -> str:
    ms = 1000 * np.asarray(seconds)
    return f"{ms.mean():.1f} ms/doc mean, p50 {np.percentile(ms, 50):.1f}, p95 {np.percentile(ms, 95):.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPOSITORY / "models" / "entqa-minilm"), help="checkpoint folder")
    parser.add_argument("--kb", help="KB file (default: the checkpoint's demo KB; other KBs' index from the cache)")
    parser.add_argument("--dataset", required=True, help="NIF corpus (only its texts are sent)")
    parser.add_argument("--docs", type=int, default=50, help="only the first N documents")
    parser.add_argument("--k", type=int, nargs="+", default=[20, 50, 100], help="candidates per passage")
    parser.add_argument("--profile", type=int, default=0, help="print the N costliest functions at the last K")
    args = parser.parse_args()

    linker = Linker.from_pretrained(args.model, kb_path=args.kb, device="cpu")
    linker = with_stand_ins(linker, batch_size=RuntimeSettings().gpu_batch_size)
    documents = load_dataset("dataset", args.dataset).documents[: args.docs]
    requests = [write_document(reduce_document(document, task=Task.A2KB, uri=REQUEST_URI.format(n=i))).encode()
                for i, document in enumerate(documents)]
    print(f"{len(requests)} documents, {len(linker.index):,} entities, torch threads {torch.get_num_threads()}")
    for k in args.k:
        timed = TimedLinker(with_top_k(linker, k))
        client = create_app({"TESTING": True}, linker=timed).test_client()
        client.post("/gerbil", data=requests[0], headers=HEADERS)  # warm-up
        timed.seconds.clear()
        timed.profile = cProfile.Profile() if args.profile and k == args.k[-1] else None
        route, parse, mentions = [], [], 0
        for body in requests:
            started = time.perf_counter()
            response = client.post("/gerbil", data=body, headers=HEADERS)
            answered = time.perf_counter()
            mentions += len(parse_document(response.data).annotations)
            route.append(answered - started)
            parse.append(time.perf_counter() - answered)
        print(f"K={k}: linker {summary(timed.seconds)}; route {summary(route)} ({sum(route):.2f} s in all); "
              f"client parse {summary(parse)}; {mentions} mentions")
        if timed.profile:
            pstats.Stats(timed.profile).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
