"""Corpora for training and benchmarks: NIF datasets read by `gerbil.datasets` into annotator's `CorpusDocument`s."""
from __future__ import annotations

import argparse
import logging
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from annotator.training.data import CorpusDocument, Fold, GoldLink
from annotator.uris import title_from_uri
from gerbil.datasets import Dataset, load_nif
from nif.data_types import NifAnnotation, NifDocument

logger = logging.getLogger(__name__)


def read_dataset(path: Path, *, documents: int | None = None) -> Dataset:
    """A NIF corpus as a GERBIL dataset (named by its file), cut to its first `documents` when given."""
    dataset = load_nif(path, name=path.stem)
    logger.info("read %d documents from %s", len(dataset.documents), path)
    return replace(dataset, documents=dataset.documents[:documents])


def corpus_documents(documents: Iterable[NifDocument]) -> list[CorpusDocument]:
    """NIF documents with their gold links: each annotation's title from its first URI (a DBpedia resource or
    Wikipedia page), None where that names no KB entity (a NIL mention)."""
    return [CorpusDocument(d.uri, d.text, tuple(GoldLink(a.start, a.end, _title(a)) for a in d.annotations))
            for d in documents]


def read_corpus(path: Path, *, documents: int | None = None, leave_out: Fold | None = None) -> list[CorpusDocument]:
    """The `CorpusDocument`s of a NIF corpus, in document order (its first `documents` when given; without the
    documents of the fold `leave_out` when given)."""
    corpus = corpus_documents(read_dataset(path, documents=documents).documents)
    if leave_out is None:
        return corpus
    kept = leave_out.leaves(corpus)
    logger.info("fold %s left out: %d of %d documents kept", leave_out, len(kept), len(corpus))
    return kept


def fold_argument(text: str) -> Fold:
    """A command line's `K/N` (argparse `type=`)."""
    try:
        return Fold.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _title(annotation: NifAnnotation) -> str | None:
    try:
        return title_from_uri(annotation.uris[0]) if annotation.uris else None
    except ValueError:  # NIL (e.g. http://aida/notInWiki/...) or outside the KB's namespaces
        return None
