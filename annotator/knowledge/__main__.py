"""Command line: build the knowledge tables (entity graph, prominence, name priors) of a KB for a checkpoint."""
from __future__ import annotations

import argparse
import logging
import resource
import time
from collections.abc import Sequence
from pathlib import Path

from annotator.knowledge.loading import load_knowledge


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m annotator.knowledge") -> int:
    """Builds (or finds built) the tables the command line asks for; `prog` names the command in help."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--model", required=True, help="checkpoint folder (its mentions.tsv gives the training links)")
    parser.add_argument("--kb", required=True, help="KB file: shared, BLINK or KILT JSON lines (.jsonl[.gz])")
    parser.add_argument("--out", type=Path, help="folder to write; default: the cache folder the linker reads for "
                                                 "this KB ($ENTQA_CACHE/knowledge/...)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    started = time.perf_counter()
    knowledge, directory = load_knowledge(Path(args.model), Path(args.kb), out=args.out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"{directory}: {len(knowledge)} entities, {knowledge.graph.nnz} graph edges, {len(knowledge.priors)} names "
          f"({time.perf_counter() - started:.0f} s, peak memory {peak:.1f} GiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
