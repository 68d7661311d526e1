"""Command line: `python -m annotator.cli.mention_table --train T --kb KB --out MODEL_DIR/mentions.tsv`.

Counts the mention table (`annotator.pipeline.mention_table`) from a training corpus's links: for every linked name,
the KB entities the corpus gave it and how often.
"""
from __future__ import annotations

import argparse
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from annotator.cli.corpora import fold_argument, read_corpus
from annotator.pipeline.mention_table import MentionTable
from annotator.training.data import CorpusDocument, TitleLookup, load_kb

logger = logging.getLogger(__name__)


def training_links(documents: Iterable[CorpusDocument], lookup: TitleLookup) -> Iterable[tuple[str, str]]:
    """(name, KB title) of every gold link whose title `lookup` finds in the KB."""
    for document in documents:
        for link in document.links:
            row = lookup.row(link.title) if link.title is not None else None
            if row is not None:
                yield document.text[link.start:link.end], lookup.kb.titles[row]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m annotator.cli.mention_table", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=Path, required=True, help="training corpus (NIF Turtle)")
    parser.add_argument("--leave-out-fold", type=fold_argument, metavar="K/N",
                        help="count without the K-th of N runs of consecutive documents (a cross-fitted reader's "
                             "table)")
    parser.add_argument("--kb", type=Path, required=True, help="entity KB: titles are stored as the KB spells them")
    parser.add_argument("--out", type=Path, required=True, help="the table (TSV), e.g. MODEL_DIR/mentions.tsv")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    lookup = TitleLookup(load_kb(args.kb))
    table = MentionTable.from_links(training_links(read_corpus(args.train, leave_out=args.leave_out_fold), lookup))
    table.save(args.out)
    logger.info("%s; %d names, %d (name, entity) pairs written to %s", lookup.report(), len(table),
                sum(len(v) for v in table.entities.values()), args.out)


if __name__ == "__main__":
    main()
