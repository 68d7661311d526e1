"""Training the learned decision on a corpus the linker reads (AIDA train): each document read twice, with its gold
spans given (D2KB) and without (A2KB), every span's candidates turned into feature rows labelled by the gold, one
LightGBM model fitted on all of them, and the two thresholds chosen on out-of-fold predictions (folds by document).
A document's own links are left out of the name priors' training counts (`held_out`), as they are for new text.

The reader and the retriever were trained on the same corpus, so their scores on it are fitted: on AIDA train's
first 500 documents the gold is among a given span's candidates for 99.9 % of spans and the reader's best candidate
is right for 95.8 %, against 96.8 % and 83.2 % on AIDA-A (2026-12-07). A decision fitted on those scores trusts the
reader more than new text warrants (docs/decisions.md#learned-decision). With `--fold-models`, each run of
consecutive documents is read by a checkpoint whose reader and mention table were trained without it (readers
trained on folds: a GPU round, `tools/gpu_round/` stage `folds`), so the decision learns from scores on new text.

`python -m annotator.decision.training --model M --kb KB --train T` (or `entqa train-decision`) writes
`M/decision/`.
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import logging
import pickle
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import lightgbm
import numpy as np
from tqdm import tqdm

from annotator.decision.features import FEATURE_GROUPS, FEATURES, SpanCandidates, document_candidates
from annotator.decision.model import Decision, DecisionSettings, reader_identity
from annotator.knowledge import Knowledge, name_key
from annotator.pipeline.document import Document
from annotator.pipeline.document_candidates import DocumentCandidates
from annotator.pipeline.short_names import ShortNames
from annotator.linking import Span
from annotator.pipeline.linker import Linker
from annotator.pipeline.text_view import TextView
from annotator.pipeline.title_only_look import TitleOnlyLook
from annotator.training.data import CorpusDocument, KnowledgeBase, TitleLookup, fold_numbers

logger = logging.getLogger(__name__)

PARAMETERS = {"objective": "binary", "learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 20,
              "feature_fraction": 0.9, "bagging_fraction": 0.9, "bagging_freq": 1, "lambda_l2": 1.0,
              "verbose": -1, "seed": 0, "num_threads": 0}  # 0: every core
ROUNDS = 300
FOLDS = 5
DECODING_THRESHOLD = 0.002
# the stages the shipped linker runs before the decision, in order (`annotator.pipeline.loading`)
READING_STAGES = (DocumentCandidates, ShortNames, TitleOnlyLook)


@dataclass(frozen=True)
class Examples:
    """Feature rows of (span, candidate) pairs with their labels and where they come from."""

    features: np.ndarray  # (n, len(FEATURES))
    labels: np.ndarray  # (n,) 1 where the candidate is the span's gold entity
    document: np.ndarray  # (n,) the document's index
    span: np.ndarray  # (n,) a span id, unique over the examples
    given: np.ndarray  # (n,) bool: a given span (D2KB) or a found one (A2KB)


@dataclass(frozen=True)
class Gold:
    """A document's gold spans: (start, end) → KB row, or None for NIL and entities outside the KB."""

    spans: dict[tuple[int, int], int | None]

    @property
    def linked(self) -> int:
        return sum(row is not None for row in self.spans.values())


def reading_linker(linker: Linker) -> Linker:
    """`linker` up to the learned decision: its stages that read again and the first-pass rules among them (what
    the decision is trained and run after)."""
    kept = list(itertools.takewhile(lambda p: isinstance(p, READING_STAGES), linker.post_processors))
    return dataclasses.replace(linker, post_processors=kept)


def read_documents(linker: Linker | None, texts: Sequence[str], spans: Sequence[Sequence[Span] | None], *,
                   cache: Path | None, description: str, batch_size: int = 8
                   ) -> tuple[list[TextView], list[Document]]:
    """Each text's view and document read by `linker`, `batch_size` at a time (kept in `cache` when given, and read
    from it when there: `linker` may then be None)."""
    if cache is not None and cache.is_file():
        return pickle.loads(cache.read_bytes())
    if linker is None:
        raise ValueError(f"no linker to read {description} with, and no readings in {cache}")
    views: list[TextView] = []
    documents: list[Document] = []
    for first in tqdm(range(0, len(texts), batch_size), desc=f"reading {description}", unit="batch"):
        part_views, part_documents = linker.read(texts[first:first + batch_size], spans[first:first + batch_size])
        views += part_views
        documents += part_documents
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps((views, documents)))
    return views, documents


def span_candidates(linker: Linker, document: Document, knowledge: Knowledge, described: np.ndarray,
                    decoding_threshold: float, held_out: Mapping[str, Mapping[int, int]]) -> list[SpanCandidates]:
    """`document_candidates` with the linker's settings, `held_out` links left out of the priors."""
    config = linker.config
    return document_candidates(document, linker.index.titles, described, knowledge, top_k=config.top_k,
                               threshold=config.threshold, found_threshold=decoding_threshold,
                               top_spans=config.top_spans, max_span_len=config.max_span_len, held_out=held_out)


def blocks(documents: int) -> np.ndarray:
    """(documents,) the block of each document: `FOLDS` runs of consecutive documents (`fold_numbers`)."""
    return np.array(fold_numbers(documents, FOLDS), dtype=np.int64)


def held_out_links(corpus: Sequence[CorpusDocument], golds: Sequence[Gold]) -> list[dict[str, dict[int, int]]]:
    """Per document, the gold links of its whole block (name key → row → count): left out of the name priors'
    training counts, so that a document's names are as new to the priors as a new text's. A document alone would
    not do: a story runs over several documents, and its names would still be known from the others."""
    per_block: dict[int, dict[str, dict[int, int]]] = {}
    for block, document, gold in zip(blocks(len(corpus)).tolist(), corpus, golds):
        counts = per_block.setdefault(block, {})
        for (start, end), row in gold.spans.items():
            if row is not None:
                own = counts.setdefault(name_key(document.text[start:end]), {})
                own[row] = own.get(row, 0) + 1
    return [per_block[block] for block in blocks(len(corpus)).tolist()]


def examples(candidates: Sequence[Sequence[SpanCandidates]], golds: Sequence[Gold], *, given: bool,
             first_span: int = 0) -> Examples:
    """The labelled rows of every document's span candidates."""
    features, labels, document, span, flags = [], [], [], [], []
    span_id = first_span
    for index, (spans, gold) in enumerate(zip(candidates, golds)):
        for candidate in spans:
            row = gold.spans.get((candidate.start, candidate.end))
            features.append(candidate.features)
            labels.append((candidate.rows == row) if row is not None else np.zeros(len(candidate.rows), dtype=bool))
            document.append(np.full(len(candidate.rows), index))
            span.append(np.full(len(candidate.rows), span_id))
            flags.append(np.full(len(candidate.rows), given))
            span_id += 1
    width = len(FEATURES)
    return Examples(np.concatenate(features) if features else np.zeros((0, width), dtype=np.float32),
                    np.concatenate(labels).astype(np.int8) if labels else np.zeros(0, dtype=np.int8),
                    np.concatenate(document) if document else np.zeros(0, dtype=np.int64),
                    np.concatenate(span) if span else np.zeros(0, dtype=np.int64),
                    np.concatenate(flags) if flags else np.zeros(0, dtype=bool))


def fit(rows: Examples, rounds: int = ROUNDS) -> lightgbm.Booster:
    data = lightgbm.Dataset(rows.features, rows.labels.astype(np.float32), feature_name=list(FEATURES),
                            free_raw_data=False)
    return lightgbm.train(PARAMETERS, data, num_boost_round=rounds)


def out_of_fold(rows: Examples, block_of_document: np.ndarray) -> np.ndarray:
    """Each row's probability from a model fitted on the other blocks' documents."""
    predictions = np.zeros(len(rows.labels))
    fold_of = block_of_document[rows.document]
    for fold in np.unique(fold_of).tolist():
        held = fold_of == fold
        part = dataclasses.replace(rows, **{f.name: getattr(rows, f.name)[~held] for f in dataclasses.fields(rows)})
        predictions[held] = fit(part).predict(rows.features[held], num_threads=0)
    return predictions


def best_threshold(rows: Examples, probabilities: np.ndarray, gold_linked: int, *, given: bool) -> tuple[float, float]:
    """The bar on the likeliest candidate's probability that maximises micro F1 over the rows' spans, and that F1.
    A span's answer is its likeliest candidate: right where that is its gold, wrong otherwise."""
    best_p, best_label = {}, {}
    for span, p, label in zip(rows.span.tolist(), probabilities.tolist(), rows.labels.tolist()):
        if span not in best_p or p > best_p[span]:
            best_p[span], best_label[span] = p, label
    p = np.array(list(best_p.values()))
    right = np.array(list(best_label.values()), dtype=bool)
    results = []
    for bar in np.arange(0.05, 0.96, 0.01):
        kept = p > bar
        tp = int((kept & right).sum())
        fp = int((kept & ~right).sum())
        f1 = 2 * tp / max(2 * tp + fp + (gold_linked - tp), 1)
        results.append((f1, float(bar)))
    f1, bar = max(results)
    logger.info("%s spans: threshold %.2f gives out-of-fold F1 %.4f (found spans: before overlaps)",
                "given" if given else "found", bar, f1)
    return bar, f1


def gold_of(corpus: Sequence[CorpusDocument], lookup: TitleLookup) -> list[Gold]:
    return [Gold({(link.start, link.end): (lookup.row(link.title) if link.title else None) for link in d.links})
            for d in corpus]


def read_corpus_folds(readers: Sequence[Path], load: Callable[[Path], Linker], corpus: Sequence[CorpusDocument],
                      folds: Sequence[int], *, given: bool, cache: Callable[[str], Path | None]) -> list[Document]:
    """Each document of `corpus` read by the reading linker that `load` makes of `readers[fold]`, its fold's
    checkpoint: one reader for all, or readers trained each without its fold (`python -m annotator.cli.train reader
    --leave-out-fold`), so that every document is read as new text. One checkpoint is loaded at a time."""
    task = "given" if given else "found"
    documents: list[Document | None] = [None] * len(corpus)
    for fold, checkpoint in enumerate(readers):
        where = [i for i, f in enumerate(folds) if f == fold]
        if not where:
            continue
        kept = cache(task if len(readers) == 1 else f"fold{fold + 1}of{len(readers)}-{task}")
        linker = None if kept is not None and kept.is_file() else load(checkpoint)
        spans = [[(link.start, link.end) for link in corpus[i].links] if given else None for i in where]
        _, read = read_documents(linker, [corpus[i].text for i in where], spans, cache=kept,
                                 description=f"{task} spans" + (f", {checkpoint.name}" if len(readers) > 1 else ""))
        for i, document in zip(where, read):
            documents[i] = document
        del linker
    return documents  # type: ignore[return-value]  # every fold's documents filled in above


def corpus_examples(linker: Linker, documents: Sequence[Document], golds: Sequence[Gold],
                    held_out: Sequence[Mapping[str, Mapping[int, int]]], knowledge: Knowledge, described: np.ndarray, *,
                    given: bool, first_span: int) -> Examples:
    """The labelled rows of a corpus's read documents (with `linker`'s settings and KB titles)."""
    candidates = [span_candidates(linker, d, knowledge, described, DECODING_THRESHOLD, held)
                  for d, held in zip(tqdm(documents, desc="features", unit="doc"), held_out)]
    return examples(candidates, golds, given=given, first_span=first_span)


def reader_agreement(rows: Examples, gold_linked: int, threshold: float) -> dict[str, float]:
    """How the reader alone does on the given spans' rows: the share of linked gold spans whose gold is among the
    candidates, whose best reader score is the gold's and above `threshold` (γ), and whose gold is among the
    candidates but which the reader leaves NIL.
    On the reader's own training text these run far above new text's (the decision's reason for folds)."""
    score = rows.features[:, FEATURES.index("score")]
    best: dict[int, tuple[float, int]] = {}
    among: set[int] = set()
    for span, value, label in zip(rows.span.tolist(), score.tolist(), rows.labels.tolist()):
        if label:
            among.add(span)
        if span not in best or value > best[span][0]:
            best[span] = (value, label)
    linked = max(gold_linked, 1)
    return {"gold_among_candidates": len(among) / linked,
            "reader_right": sum(1 for value, label in best.values() if label and value > threshold) / linked,
            "nil_with_gold_among": sum(1 for span, (value, _) in best.items()
                                       if span in among and value <= threshold) / linked}


def joined(parts: Sequence[Examples]) -> Examples:
    return Examples(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in dataclasses.fields(Examples)))


def selected(rows: Examples, mask: np.ndarray) -> Examples:
    return Examples(*(getattr(rows, f.name)[mask] for f in dataclasses.fields(Examples)))


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m annotator.decision.training") -> int:
    """Trains and writes the decision the command line asks for; `prog` names the command in help."""
    from annotator.knowledge.loading import load_knowledge
    from annotator.cli.corpora import read_corpus

    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--train", type=Path, required=True, help="NIF corpus with gold links (AIDA train)")
    parser.add_argument("--documents", type=int, help="only the first N documents")
    parser.add_argument("--without", nargs="*", default=[], choices=sorted(FEATURE_GROUPS),
                        help="feature groups to leave out (an ablation)")
    parser.add_argument("--readings", type=Path, help="folder to keep the read documents in between runs")
    parser.add_argument("--fold-models", type=Path, nargs="+", metavar="DIR",
                        help="read the corpus with these checkpoints instead of --model's: the K-th of N reads the "
                             "K-th of N runs of consecutive documents, and was trained without them (`python -m "
                             "annotator.cli.train reader --leave-out-fold K/N`, and its mention table with "
                             "`python -m annotator.cli.mention_table --leave-out-fold K/N`)")
    parser.add_argument("--out", type=Path, help="checkpoint folder to write decision/ into (default: --model)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    started = time.perf_counter()
    linker = reading_linker(Linker.from_pretrained(args.model, kb_path=args.kb, config_overrides={"decision": False}))
    knowledge, _ = load_knowledge(args.model, args.kb)
    described = linker.descriptions.described()
    lookup = TitleLookup(KnowledgeBase(list(linker.index.titles), [""] * len(linker.index)))
    whole = read_corpus(args.train)
    held_out = held_out_links(whole, gold_of(whole, lookup))[:args.documents]
    corpus = whole[:args.documents]
    golds = gold_of(corpus, lookup)
    readers = args.fold_models or [args.model]
    # folds over the whole corpus, as the fold readers left them out
    folds = fold_numbers(len(whole), len(readers))[:len(corpus)]

    def cache(name: str) -> Path | None:
        return args.readings / f"{args.train.stem}-{len(corpus)}-{name}.pkl" if args.readings else None

    def load(checkpoint: Path) -> Linker:
        if checkpoint == args.model:
            return linker
        return reading_linker(Linker.from_pretrained(checkpoint, kb_path=args.kb, config_overrides={"decision": False}))

    parts = [corpus_examples(linker, read_corpus_folds(readers, load, corpus, folds, given=given, cache=cache),
                             golds, held_out, knowledge, described, given=given, first_span=i * 10**7)
             for i, given in enumerate((True, False))]
    linked = sum(g.linked for g in golds)
    agreement = reader_agreement(parts[0], linked, linker.config.threshold)
    logger.info("the reader alone on the given spans: %s",
                ", ".join(f"{name} {100 * share:.1f} %" for name, share in agreement.items()))
    rows = joined(parts)
    if args.without:
        rows.features[:, [FEATURES.index(name) for group in args.without for name in FEATURE_GROUPS[group]]] = 0
    oof = out_of_fold(rows, blocks(len(whole)))
    bars = {}
    for given in (True, False):
        mask = rows.given == given
        bars[given] = best_threshold(selected(rows, mask), oof[mask], linked, given=given)
    booster = fit(rows)
    decision = Decision(booster, DecisionSettings(bars[True][0], bars[False][0], DECODING_THRESHOLD,
                                                  tuple(args.without)),
                        {"reader": reader_identity(args.model), "corpus": args.train.name, "documents": len(corpus),
                         "read_by": [reader_identity(r) for r in readers], "reader_agreement": agreement,
                         "rows": int(len(rows.labels)),
                         "positives": int(rows.labels.sum()),
                         "out_of_fold_f1": {"given": bars[True][1], "found": bars[False][1]}})
    directory = decision.save(args.out or args.model)
    importance = sorted(zip(FEATURES, booster.feature_importance("gain")), key=lambda x: -x[1])
    print(f"{directory}: {len(rows.labels)} rows, thresholds {bars[True][0]:.2f} (given) / {bars[False][0]:.2f} "
          f"(found), out-of-fold F1 {bars[True][1]:.4f} / {bars[False][1]:.4f}, {time.perf_counter() - started:.0f} s")
    print("gain: " + ", ".join(f"{name} {gain:.0f}" for name, gain in importance))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
