"""Bench helper: a KB subset for CPU-sized evaluations — the gold entities of a corpus plus random distractors.

Encoding the 1M-entity KB takes over an hour on a 2-core CPU, so CPU figures use this subset (a closed
world: every gold entity is in it, as in the KB's own README baseline). Results on it are optimistic and
must be reported with its size.

    python -m bench.eval_kb --kb ../shared/data/kb/entities.jsonl.gz --corpus ../shared/data/aida/dev.ttl \
        --random 20000 --out ~/.cache/entqa/eval_kb_dev_20k.jsonl.gz
"""
from __future__ import annotations

import argparse
from pathlib import Path

from annotator.training.data import KnowledgeBase, TitleLookup, load_kb, sample_kb_rows
from annotator.cli.corpora import read_corpus


def gold_rows(kb: KnowledgeBase, corpus: str) -> set[int]:
    """KB rows of the corpus's linked gold entities (NIL and unknown titles skipped)."""
    lookup = TitleLookup(kb)
    rows = set()
    for document in read_corpus(Path(corpus)):
        for link in document.links:
            row = lookup.row(link.title) if link.title is not None else None
            if row is not None:
                rows.add(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", required=True)
    parser.add_argument("--corpus", required=True, action="append", help="NIF corpus whose golds to include")
    parser.add_argument("--random", type=int, default=20_000, help="distractors drawn uniformly from the KB")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    kb = load_kb(args.kb)
    golds = set().union(*(gold_rows(kb, corpus) for corpus in args.corpus))
    subset = kb.subset(sample_kb_rows(len(kb), golds, args.random, seed=args.seed))
    subset.write_jsonl_gz(args.out)
    print(f"{len(golds)} gold entities + {len(subset) - len(golds)} random = {len(subset)} entities "
          f"({100 * subset.title_only_share():.1f}% title-only) -> {args.out}")


if __name__ == "__main__":
    main()
