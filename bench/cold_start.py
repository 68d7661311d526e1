"""Benchmark: entity-index build throughput and the linker's cold-start time and peak memory.

Run from the repository root: python -m bench.cold_start --limit 5000
"""
from __future__ import annotations

import time

_STARTED = time.perf_counter()  # before the heavy imports, so that the cold start includes them

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from annotator.model.checkpoint import new_reader, new_retriever, save_checkpoint  # noqa: E402
from annotator.model.config import LinkerConfig  # noqa: E402
from annotator.model.encoders import load_tokenizer, resolve_encoder  # noqa: E402
from annotator.entity_index.__main__ import build_index  # noqa: E402
from annotator.pipeline.linker import Linker  # noqa: E402
from annotator.runtime.settings import RuntimeSettings  # noqa: E402

REPOSITORY = Path(__file__).resolve().parents[1]
SHARED_KB = REPOSITORY.parent / "shared" / "data" / "kb" / "entities.jsonl.gz"
SAMPLE = "SOCCER - Lyon beat Paris Saint-Germain 2-1 in the French league on Saturday in front of 40,000 fans."


def pretrained_checkpoint(directory: Path) -> Path:
    """An EntQA checkpoint of the pretrained MiniLM towers and an untrained reader head (timing only)."""
    config = LinkerConfig.paper()  # as a retriever trained from scratch starts (no mention table)
    return save_checkpoint(directory, config=config, tokenizer=load_tokenizer(resolve_encoder(config.encoder)),
                           retriever=new_retriever(config), reader=new_reader(config))


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def cold_start(model: str, index: str) -> None:
    """Run in a fresh process: time imports, Linker.from_pretrained and a first link()."""
    imported = time.perf_counter()
    linker = Linker.from_pretrained(model, index_dir=index)
    loaded = time.perf_counter()
    rss_loaded = peak_rss_mib()
    mentions = linker.link(SAMPLE)
    linked = time.perf_counter()
    print(json.dumps({"import_s": imported - _STARTED, "from_pretrained_s": loaded - imported,
                      "first_link_s": linked - loaded, "mentions": len(mentions),
                      "peak_rss_after_load_mib": rss_loaded, "peak_rss_mib": peak_rss_mib(),
                      "device": linker.describe()["device"], "entities": len(linker.index)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", help="checkpoint folder (default: pretrained MiniLM towers, untrained heads)")
    parser.add_argument("--kb", default=str(SHARED_KB), help="KB file to index")
    parser.add_argument("--limit", type=int, default=5000, help="entities to index (the first N of the KB)")
    parser.add_argument("--index-type", default="flat", help="flat or hnsw (the cold start searches flat)")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (the CPU may be shared)")
    parser.add_argument("--out", help="index folder (default: a temporary folder)")
    parser.add_argument("--cold-start-only", nargs=2, metavar=("MODEL", "INDEX"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.cold_start_only:
        cold_start(*args.cold_start_only)
        return
    with tempfile.TemporaryDirectory() as scratch:
        model = Path(args.model) if args.model else pretrained_checkpoint(Path(scratch) / "model")
        out = Path(args.out or Path(scratch) / "index")
        started = time.perf_counter()
        index = build_index(model, args.kb, out, runtime=RuntimeSettings(index_type=args.index_type),
                            batch_size=args.batch_size,
                            limit=args.limit)
        seconds = time.perf_counter() - started
        print(f"index build: {len(index)} entities in {seconds:.1f} s = {len(index) / seconds:.1f} entities/s "
              f"({args.index_type}, batch {args.batch_size}, {args.threads} torch thread(s), "
              f"{'CUDA' if torch.cuda.is_available() else 'CPU'})")
        child = subprocess.run([sys.executable, "-m", "bench.cold_start", "--threads", str(args.threads),
                                "--cold-start-only", str(model), str(out)],
                               check=True, capture_output=True, text=True, cwd=REPOSITORY)
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        print(f"cold start ({figures['entities']} entities, {figures['device']}): imports {figures['import_s']:.2f} s"
              f" + Linker.from_pretrained {figures['from_pretrained_s']:.2f} s; first link() "
              f"{figures['first_link_s']:.2f} s ({figures['mentions']} mentions)")
        print(f"peak RSS: {figures['peak_rss_after_load_mib']:.0f} MiB after loading, "
              f"{figures['peak_rss_mib']:.0f} MiB after the first link()")


if __name__ == "__main__":
    main()
