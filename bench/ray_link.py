"""Documents/s of `entqa link --ray` with 1 and 2 actors against the in-process batch linker, on the same documents.

Reads the first --docs texts of a NIF corpus at run time (nothing of it is stored) and links them end to end
(A2KB) three ways, each timed from a cold start: in process (`cli.link_documents`: `Linker.link_batch`, --batch-size
at a time), and on a local Ray with 1 and 2 CPU actors (`annotator.cli.distributed.link_corpus`). The Ray figures
include starting the actors, each of which loads the model and the index, as a run does; the in-process load time is
printed apart, to set against it.

    python -m bench.ray_link --dataset ../shared/data/aida/dev.ttl --docs 24
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from annotator import DEFAULT_MODEL_DIR
from annotator.settings import settings_from_variables
from annotator.cli import command as cli
from annotator.cli import distributed
from annotator.cli.documents import InputDocument
from gerbil.datasets import load_nif

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
EMBEDDED_KB = DEFAULT_MODEL_DIR / "kb" / "entities.jsonl.gz"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=SHARED / "aida" / "dev.ttl", help="NIF corpus")
    parser.add_argument("--docs", type=int, default=24, help="documents to link (default: 24)")
    parser.add_argument("--batch-size", type=int, default=8, help="documents per batch and per block (default: 8)")
    parser.add_argument("--kb", type=Path, default=EMBEDDED_KB, help="KB (default: the embedded one)")
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2], help="actor counts (default: 1 2)")
    args = parser.parse_args(argv)

    texts = [document.text for document in load_nif(args.dataset, name="bench").documents[:args.docs]]
    documents = [InputDocument(number, text) for number, text in enumerate(texts)]
    print(f"{len(documents)} documents, {sum(map(len, texts))} characters, batch size {args.batch_size}, "
          f"KB {args.kb}")

    settings = settings_from_variables(os.environ)  # as `entqa link` reads them
    started = time.perf_counter()
    linker = cli.load_linker(DEFAULT_MODEL_DIR, kb_path=args.kb, index_dir=None, device="cpu", settings=settings)
    loaded = time.perf_counter()
    cli.link_documents(linker, documents, batch_size=args.batch_size)
    linked = time.perf_counter()
    del linker
    print(f"in process: load {loaded - started:.1f} s, link {linked - loaded:.1f} s: "
          f"{len(documents) / (linked - loaded):.2f} docs/s linking, {len(documents) / (linked - started):.2f} "
          "docs/s with the load")

    ray = distributed.import_ray()
    ray.init(log_to_driver=False, include_dashboard=False)
    try:
        for actors in args.actors:
            with tempfile.TemporaryDirectory() as output:
                started = time.perf_counter()
                distributed.link_corpus(documents, Path(output), model_dir=DEFAULT_MODEL_DIR, kb_path=args.kb,
                                        index_dir=None, device="cpu", settings=settings, address=None, actors=actors,
                                        batch_size=args.batch_size, output_format="jsonl")
                seconds = time.perf_counter() - started
            print(f"ray, {actors} actor{'s' if actors > 1 else ''}: {seconds:.1f} s with the actors' load: "
                  f"{len(documents) / seconds:.2f} docs/s")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
