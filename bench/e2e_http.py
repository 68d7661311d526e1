"""Bench: end-to-end linking through the GERBIL NIF endpoint of a real gunicorn server, for several K.

For each K (candidates per passage) a gunicorn server is started on a free loopback port with
ENTQA_TOP_K=K, the dataset's first N documents are sent one at a time as GERBIL sends them (A2KB,
`gerbil.client.HttpAnnotator`), and the answers are scored by `gerbil.experiment.evaluate`. Printed per
K: server cold start (spawn to the first /health answer), documents, docs/s, ms/doc p50/p95 and InKB
micro F1 (strong matching). With --baseline the same documents are also linked in process by the
batched `Linker` and by `bench.naive_reader.naive_linker` (one full-precision reader call per (passage,
candidate) pair, as the original EntQA), printing both speeds, the speed-up and whether the mentions
agree (on the CPU they differ slightly: the batched reader runs in int8 or bf16 unless ENTQA_CPU_PRECISION=fp32).
Figures are printed, never asserted.

Run from the repository root (a CPU run of all 216 AIDA-A documents at K=100 takes hours):

    python -m bench.e2e_http --model models/entqa-minilm --kb ../shared/data/kb/entities.jsonl.gz \
        --dataset ../shared/data/aida/dev.ttl --docs 20 --k 20 50 100 --baseline \
        --out e2e_http.json --plot e2e_http.png

Without --index-dir the KB's index comes from the cache ($ENTQA_CACHE); when it is not built yet,
--baseline builds it in process first, otherwise the first server's cold start includes the build.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from annotator.pipeline.linker import Linker
from annotator.settings import settings_from_variables
from bench.gunicorn_process import REPOSITORY, gunicorn_serving, wait_for_health
from bench.naive_reader import naive_linker
from gerbil.client import Annotator, Answer, HttpAnnotator, InProcessAnnotator, Task
from gerbil.datasets import Dataset, load_dataset
from gerbil.experiment import evaluate

SHARED = REPOSITORY.parent / "shared" / "data"


def serve_and_annotate(dataset: Dataset, *, env: Mapping[str, str], startup_timeout_s: float,
                       log_path: Path) -> tuple[float, dict[str, Any], list[Answer]]:
    """Starts gunicorn with `env`, sends every document over HTTP, and always stops the server.

    Returns:
        Cold-start seconds, the /health answer and one answer per document.
    """
    started = time.perf_counter()
    with gunicorn_serving(env=env, log_path=log_path, startup_timeout_s=startup_timeout_s) as server:
        cold_start_s = time.perf_counter() - started
        health = wait_for_health(f"{server.url}/health", server.process, startup_timeout_s)
        answers = annotate_all(dataset, HttpAnnotator(f"{server.url}/gerbil"))
    return cold_start_s, health, answers


def annotate_all(dataset: Dataset, annotator: Annotator) -> list[Answer]:
    """Every document, one at a time and in order, as `gerbil.experiment.run_experiment` sends them."""
    return [annotator.annotate(document, task=Task.A2KB) for document in dataset.documents]


def figures(dataset: Dataset, answers: Sequence[Answer]) -> dict[str, Any]:
    """Speed and InKB micro F1 (strong A2KB matching) of one pass over the documents."""
    latencies = np.array([answer.latency_s for answer in answers])
    scores = evaluate(dataset, answers, task=Task.A2KB, matching="strong")
    return {"docs": len(answers), "errors": sum(answer.error is not None for answer in answers),
            "seconds": float(latencies.sum()), "docs_per_s": len(answers) / float(latencies.sum()),
            "s_per_doc": float(latencies.mean()), "ms_p50": float(np.percentile(latencies, 50) * 1000),
            "ms_p95": float(np.percentile(latencies, 95) * 1000), "inkb_micro_f1": scores["inkb"].micro.f1,
            "mentions": sum(len(answer.annotations) for answer in answers)}


def same_mentions(first: Sequence[Answer], second: Sequence[Answer]) -> bool:
    """Whether two passes found the same spans with the same entities (scores may differ in the last bits)."""
    def key(answer: Answer) -> list[tuple[int, int, tuple[str, ...]]]:
        return sorted((a.start, a.end, tuple(a.uris)) for a in answer.annotations)
    return all(key(a) == key(b) for a, b in zip(first, second, strict=True))


def describe(label: str, row: Mapping[str, Any]) -> str:
    errors = f", {row['errors']} failed" if row["errors"] else ""
    return (f"  {label:<20} {row['docs']} docs{errors}: {row['docs_per_s']:.3f} docs/s, ms/doc p50 "
            f"{row['ms_p50']:.1f} p95 {row['ms_p95']:.1f}, InKB micro F1 {row['inkb_micro_f1']:.3f}, "
            f"{row['mentions']} mentions")


def with_top_k(linker: Linker, k: int) -> Linker:
    """`linker` retrieving `k` candidates per passage (models and index shared)."""
    return dataclasses.replace(linker, config=linker.config.replace(top_k=k),
                               retrieval=dataclasses.replace(linker.retrieval, top_k=k))


def cpu_name() -> str:
    """The CPU model from /proc/cpuinfo (platform.processor() is often empty on Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            return next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def plot(path: Path, runs: Sequence[Mapping[str, Any]], title: str) -> None:
    """F1 (left axis) and seconds/doc (right axis) against K."""
    import matplotlib

    matplotlib.use("Agg")  # no display: write the file only
    import matplotlib.pyplot as plt

    ks = [run["k"] for run in runs]
    figure, f1_axis = plt.subplots(figsize=(7, 4.5))
    f1_axis.plot(ks, [run["http"]["inkb_micro_f1"] for run in runs], "o-", color="tab:blue", label="InKB micro F1")
    f1_axis.set_xlabel("K (candidates per passage)")
    f1_axis.set_ylabel("InKB micro F1 (strong)", color="tab:blue")
    f1_axis.set_ylim(0, 1)
    f1_axis.set_xticks(ks)
    time_axis = f1_axis.twinx()
    series = [("http", "HTTP s/doc", "s-"), ("in_process", "in-process batched s/doc", "^--"),
              ("naive", "in-process naive s/doc", "v:")]
    for name, label, style in series:
        if all(name in run for run in runs):
            time_axis.plot(ks, [run[name]["s_per_doc"] for run in runs], style, color="tab:red", label=label)
    time_axis.set_ylabel("seconds per document", color="tab:red")
    time_axis.set_ylim(bottom=0)
    lines = f1_axis.get_legend_handles_labels()[0] + time_axis.get_legend_handles_labels()[0]
    f1_axis.legend(lines, [line.get_label() for line in lines], loc="upper left", fontsize="small")
    f1_axis.set_title(title, fontsize="medium")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(REPOSITORY / "models" / "entqa-minilm"), help="checkpoint folder")
    parser.add_argument("--kb", default=os.environ.get("ENTQA_KB_PATH") or None,
                        help="KB file (default: $ENTQA_KB_PATH, else the model's own KB)")
    parser.add_argument("--index-dir", help="prebuilt entity index of the KB (default: the model's or the cache's)")
    parser.add_argument("--dataset", default=str(SHARED / "aida" / "dev.ttl"), help="NIF corpus")
    parser.add_argument("--name", help="dataset name in reports (default: the file name)")
    parser.add_argument("--docs", type=int, default=10, help="link only the first N documents")
    parser.add_argument("--k", type=int, nargs="+", default=[20, 50, 100], help="candidates per passage")
    parser.add_argument("--baseline", action="store_true",
                        help="also link in process, batched and naive (one reader call per pair)")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(),
                        help="torch CPU threads, here and in the server")
    parser.add_argument("--startup-timeout", type=float, default=900.0, help="seconds to wait for /health")
    parser.add_argument("--out", help="write all figures to this JSON file")
    parser.add_argument("--plot", help="draw F1 and seconds/doc against K into this PNG")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    name = args.name or Path(args.dataset).name
    full = load_dataset(name, args.dataset)
    dataset = dataclasses.replace(full, documents=full.documents[: args.docs])
    # The server's torch reads the thread count from OMP_NUM_THREADS when it starts.
    server_env = {"ENTQA_MODEL_DIR": str(Path(args.model).resolve()), "OMP_NUM_THREADS": str(args.threads),
                  "MKL_NUM_THREADS": str(args.threads)}
    if args.kb:
        server_env["ENTQA_KB_PATH"] = str(Path(args.kb).resolve())
    if args.index_dir:
        server_env["ENTQA_INDEX_DIR"] = str(Path(args.index_dir).resolve())

    # Loaded before any server, so that an index missing from the cache is built here, not in a cold start.
    # The baseline reads the ENTQA_* settings the servers inherit from this shell, as they do.
    settings = settings_from_variables(os.environ)
    linker = (Linker.from_pretrained(args.model, kb_path=args.kb, index_dir=args.index_dir,
                                     config_overrides=settings.model, runtime=settings.runtime)
              if args.baseline else None)
    if linker is not None and dataset.documents:
        # One-time costs of the first call (allocator, lazy init) would otherwise land on the first K's batched run.
        linker.link(dataset.documents[0].text)
    naive = naive_linker(linker) if linker is not None else None
    print(f"{name}: first {len(dataset.documents)} of {len(full.documents)} documents, A2KB, "
          f"{args.threads} torch thread(s)")
    runs: list[dict[str, Any]] = []
    device = ""
    with tempfile.TemporaryDirectory() as scratch:
        for k in args.k:
            cold_start_s, health, http_answers = serve_and_annotate(
                dataset, env={**server_env, "ENTQA_TOP_K": str(k)}, startup_timeout_s=args.startup_timeout,
                log_path=Path(scratch) / f"gunicorn-k{k}.log")
            device = health.get("device", "")
            run: dict[str, Any] = {"k": k, "cold_start_s": cold_start_s, "http": figures(dataset, http_answers)}
            print(f"K={k}: server cold start {cold_start_s:.1f} s ({health.get('entities')} entities, {device})")
            print(describe("HTTP", run["http"]))
            if linker is not None:
                batched_answers = annotate_all(dataset, InProcessAnnotator(with_top_k(linker, k)))
                naive_answers = annotate_all(dataset, InProcessAnnotator(with_top_k(naive, k)))
                run.update(in_process=figures(dataset, batched_answers), naive=figures(dataset, naive_answers),
                           identical_naive=same_mentions(batched_answers, naive_answers),
                           identical_http=same_mentions(batched_answers, http_answers))
                run["speedup"] = run["in_process"]["docs_per_s"] / run["naive"]["docs_per_s"]
                run["speedup_http"] = run["http"]["docs_per_s"] / run["naive"]["docs_per_s"]
                print(describe("in-process batched", run["in_process"]))
                print(describe("in-process naive", run["naive"]))
                print(f"  speed-up over naive: {run['speedup']:.1f}x in process, {run['speedup_http']:.1f}x "
                      f"over HTTP; identical mentions: {'yes' if run['identical_naive'] else 'no'} "
                      f"(naive vs batched), {'yes' if run['identical_http'] else 'no'} (HTTP vs in process)")
            runs.append(run)

    hardware = (f"{cpu_name()}, {args.threads} thread(s)" if device.startswith("cpu")
                else f"{torch.cuda.get_device_name()} ({device})")
    title = f"EntQA A2KB over HTTP, {name} (first {len(dataset.documents)} docs)\n{hardware}"
    if args.out:
        Path(args.out).write_text(json.dumps({"dataset": name, "docs": len(dataset.documents), "model": args.model,
                                              "hardware": hardware, "device": device, "threads": args.threads,
                                              "runs": runs}, indent=2) + "\n", encoding="utf-8")
        print(f"figures written to {args.out}")
    if args.plot:
        plot(Path(args.plot), runs, title)
        print(f"plot written to {args.plot}")


if __name__ == "__main__":
    main()
