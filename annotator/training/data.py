"""Training data: the KB in memory, corpus documents cut into passages, gold mentions as wordpiece spans.

Corpora enter as `CorpusDocument`s; reading them from files (NIF) is the command lines' job (`annotator.cli.corpora`).
"""
from __future__ import annotations

import gzip
import json
import logging
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from annotator.kb.reading import read_kb
from annotator.model.tokenization import DocumentTokens, InputBuilder, Passage

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GoldLink:
    """A gold mention: the characters [start, end) of its document's text (code points) and the enwiki title it
    links to, or None for a mention without a KB entity (NIL)."""

    start: int
    end: int
    title: str | None


@dataclass(frozen=True)
class CorpusDocument:
    """A document of a training or dev corpus: its text and its gold links."""

    uri: str
    text: str
    links: tuple[GoldLink, ...] = ()


def fold_numbers(documents: int, folds: int) -> list[int]:
    """The fold (0 to `folds` - 1) of each of a corpus's `documents`: `folds` runs of consecutive documents. A news
    corpus is in time order, so the documents of one story stay in one fold and a fold's names are new to the rest."""
    return [i * folds // documents for i in range(documents)]


@dataclass(frozen=True)
class Fold:
    """The `number`-th (from 1) of `of` folds of a corpus (`fold_numbers`), written `K/N` on command lines: what a
    cross-fitted model leaves out of its training corpus and later reads as new text."""

    number: int
    of: int

    def __post_init__(self) -> None:
        if not 1 <= self.number <= self.of:
            raise ValueError(f"fold {self.number}/{self.of}: the fold is a number from 1 to {self.of}")

    @classmethod
    def parse(cls, text: str) -> Fold:
        """`K/N`, e.g. `1/2`."""
        try:
            number, of = (int(part) for part in text.split("/"))
        except ValueError:
            raise ValueError(f"a fold is written K/N (e.g. 1/2), not {text!r}") from None
        return cls(number, of)

    def __str__(self) -> str:
        return f"{self.number}/{self.of}"

    def holds(self, corpus: Sequence[CorpusDocument]) -> list[CorpusDocument]:
        """The documents of `corpus` in this fold."""
        return [d for d, fold in zip(corpus, fold_numbers(len(corpus), self.of)) if fold == self.number - 1]

    def leaves(self, corpus: Sequence[CorpusDocument]) -> list[CorpusDocument]:
        """The documents of `corpus` outside this fold: what a model of this fold is trained on."""
        return [d for d, fold in zip(corpus, fold_numbers(len(corpus), self.of)) if fold != self.number - 1]


@dataclass
class KnowledgeBase:
    """Titles and descriptions of the KB as parallel lists; `row` maps a title to its list index."""

    titles: list[str]
    texts: list[str]
    row: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.row = {title: i for i, title in enumerate(self.titles)}

    def __len__(self) -> int:
        return len(self.titles)

    def title_only_share(self, rows: Iterable[int] | None = None) -> float:
        """Share of entries without a description, among `rows` (with repeats) or the whole KB."""
        rows = range(len(self)) if rows is None else list(rows)
        return sum(not self.texts[r] for r in rows) / max(len(rows), 1)

    def subset(self, rows: Sequence[int]) -> KnowledgeBase:
        """The entries at `rows`, in that order."""
        return KnowledgeBase([self.titles[r] for r in rows], [self.texts[r] for r in rows])

    def write_jsonl_gz(self, path: str | Path) -> Path:
        """Writes the entries in the format of the shared KB (`{"title", "text", "qid"}` per line)."""
        path = Path(path)
        with gzip.open(path, "wt", encoding="utf-8") as f:
            for title, text in zip(self.titles, self.texts):
                f.write(json.dumps({"title": title, "text": text, "qid": None}, ensure_ascii=False) + "\n")
        return path


def load_kb(path: str | Path) -> KnowledgeBase:
    """Reads a KB in any format `annotator.kb.read_kb` knows into memory (1M entries: ~10 s)."""
    titles, texts = [], []
    for entity in read_kb(path):
        titles.append(entity.title)
        texts.append(entity.text)
    logger.info("read %d KB entities from %s (%.1f%% title-only)", len(titles), path,
                100 * sum(not t for t in texts) / max(len(texts), 1))
    return KnowledgeBase(titles, texts)


class TitleLookup:
    """Finds the KB row of a gold title, trying progressively looser forms, and counts how it was found.

    Forms tried: the exact title; the enwiki normal form (percent-decoded, `_` → space, first letter
    upper-cased); a case-insensitive match when it is unique. Outcomes are counted under those names
    and under "missing".
    """

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.outcomes: Counter[str] = Counter()
        self.missing: Counter[str] = Counter()
        self._folded: dict[str, int | None] | None = None

    def _casefolded(self) -> dict[str, int | None]:
        if self._folded is None:  # built on first need: 1M entries take about a second
            folded: dict[str, int | None] = {}
            for i, title in enumerate(self.kb.titles):
                key = title.casefold()
                folded[key] = None if key in folded else i  # None marks an ambiguous key
            self._folded = folded
        return self._folded

    def row(self, title: str) -> int | None:
        """The KB row of `title`, or None (counted as missing)."""
        if title in self.kb.row:
            self.outcomes["exact"] += 1
            return self.kb.row[title]
        normal = unquote(title).replace("_", " ").strip()
        normal = normal[:1].upper() + normal[1:]
        if normal in self.kb.row:
            self.outcomes["normalised"] += 1
            return self.kb.row[normal]
        folded = self._casefolded().get(normal.casefold())
        if folded is not None:
            self.outcomes["case-insensitive"] += 1
            return folded
        self.outcomes["missing"] += 1
        self.missing[title] += 1
        return None

    def report(self) -> str:
        examples = ", ".join(repr(t) for t, _ in self.missing.most_common(10))
        return (f"gold title lookup: {dict(self.outcomes)}; {len(self.missing)} distinct titles missing"
                + (f" (e.g. {examples})" if examples else ""))


@dataclass(frozen=True)
class PassageGold:
    """A gold mention inside a passage: its entity's KB row and its wordpiece span in the passage.

    `start`/`end` index the passage's wordpieces (inclusive); in the reader input they sit at +1.
    """

    row: int
    start: int
    end: int


@dataclass(frozen=True)
class TrainingPassage:
    """A passage with its model input and the gold mentions it contains entirely.

    Passages cut from a KB description (`description_passages`) say two more things about entities:
    `title_only_rows`, the described entity, whose own description is the passage and would give the answer
    away, so it is always shown by its title alone; `unlabelled_rows`, entities the passage names without a
    gold label (names the mention rules left out), which must not be trained towards "not mentioned".
    """

    document: int  # index of the document in its corpus
    passage: Passage
    input_ids: tuple[int, ...]  # `[CLS] passage [unused1] topic [SEP]`
    golds: tuple[PassageGold, ...]
    title_only_rows: frozenset[int] = frozenset()
    unlabelled_rows: frozenset[int] = frozenset()

    @property
    def gold_rows(self) -> frozenset[int]:
        return frozenset(g.row for g in self.golds)

    @property
    def not_negative_rows(self) -> frozenset[int]:
        """Entities that must not be this passage's negatives: its golds and the names it leaves unlabelled."""
        return self.gold_rows | self.unlabelled_rows


@dataclass(frozen=True)
class TrainingDocument:
    uri: str
    text: str
    gold_links: tuple[GoldLink, ...]  # the links with a title (NIL mentions are not linked)
    passages: tuple[TrainingPassage, ...]

    @property
    def gold_rows(self) -> frozenset[int]:
        return frozenset(g.row for p in self.passages for g in p.golds)


def wordpiece_span(offsets: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    """First and last (inclusive) wordpiece overlapping the characters [start, end), or None."""
    inside = [i for i, (s, e) in enumerate(offsets) if s < end and e > start and e > s]
    return (inside[0], inside[-1]) if inside else None


def build_documents(corpus: Sequence[CorpusDocument], builder: InputBuilder,
                    lookup: TitleLookup) -> list[TrainingDocument]:
    """Tokenises documents, cuts them into passages and assigns each gold mention to every passage
    whose wordpieces contain it entirely.

    Args:
        corpus: the documents with their gold links.
        builder: the input builder of the model being trained.
        lookup: resolves gold titles to KB rows (and counts the outcomes).

    Returns:
        One `TrainingDocument` per input document; NIL and unresolved mentions carry no gold.
    """
    skipped: Counter[str] = Counter()
    documents = []
    for doc_index, doc in enumerate(corpus):
        tokens = builder.tokenize_document(doc.text)
        mentions: list[tuple[int, int, int]] = []  # (row, first wordpiece, last wordpiece)
        links: list[GoldLink] = []
        for link in doc.links:
            if link.title is None:
                skipped["NIL"] += 1
                continue
            links.append(link)
            row = lookup.row(link.title)
            pieces = wordpiece_span(tokens.offsets, link.start, link.end)
            if row is None or pieces is None:
                skipped["title not in KB" if row is None else "no wordpiece"] += 1
                continue
            mentions.append((row, *pieces))
        documents.append(TrainingDocument(doc.uri, doc.text, tuple(links),
                                          cut_passages(builder, tokens, doc_index, mentions)))
    logger.info("%s; mentions not linked: %s", lookup.report(), dict(skipped))
    return documents


def cut_passages(builder: InputBuilder, tokens: DocumentTokens, document: int,
                 mentions: Sequence[tuple[int, int, int]], *, title_only_rows: frozenset[int] = frozenset(),
                 unlabelled_rows: frozenset[int] = frozenset()) -> tuple[TrainingPassage, ...]:
    """The document's passages, each with the `mentions` (KB row, first and last wordpiece) it contains entirely.

    `title_only_rows` and `unlabelled_rows` hold for every passage of the document (see `TrainingPassage`).
    """
    passages = []
    for passage in builder.split_passages(tokens):
        first, last = passage.token_start, passage.token_start + len(passage.ids) - 1
        golds = tuple(PassageGold(row, s - first, t - first) for row, s, t in mentions if first <= s and t <= last)
        passages.append(TrainingPassage(document, passage, tuple(builder.passage_input(passage, tokens.topic_ids)),
                                        golds, title_only_rows, unlabelled_rows))
    return tuple(passages)


def passages_with_golds(documents: Sequence[TrainingDocument], *, limit: int | None = None,
                        seed: int = 0) -> list[TrainingPassage]:
    """The passages that contain a gold mention, a random `limit` of them when given (for CPU runs)."""
    passages = [p for d in documents for p in d.passages if p.golds]
    if limit is not None and limit < len(passages):
        passages = random.Random(seed).sample(passages, limit)
    return passages


def always_title_only(kb: KnowledgeBase, passage: TrainingPassage, row: int) -> bool:
    """Whether an entity is shown title-only with a passage whatever the dropout: it has no description, or the
    passage is cut from its description."""
    return not kb.texts[row] or row in passage.title_only_rows


def gold_title_only_share(kb: KnowledgeBase, passages: Iterable[TrainingPassage]) -> float:
    """Share of (passage, gold) pairs whose gold is always shown title-only (`always_title_only`)."""
    shown = [always_title_only(kb, p, g) for p in passages for g in p.gold_rows]
    return sum(shown) / max(len(shown), 1)


def description_dropout(gold_share: float, negative_share: float) -> tuple[float, float]:
    """Probabilities of showing a gold / a negative entity title-only so that both shares match.

    If golds are less often title-only than negatives, some golds lose their description with
    probability p: g + (1 - g) p = n; otherwise negatives do, symmetrically. Either way a model cannot
    learn "title-only ⇒ gold" (or its opposite).

    Args:
        gold_share: title-only share among gold entities (per occurrence).
        negative_share: title-only share among sampled negatives (the KB's share).

    Returns:
        (p_gold, p_negative), one of them 0.
    """
    if gold_share < negative_share:
        return (negative_share - gold_share) / (1.0 - gold_share), 0.0
    return 0.0, (gold_share - negative_share) / max(1.0 - negative_share, 1e-9)


def sample_kb_rows(kb_size: int, required: Iterable[int], extra: int, *, seed: int) -> list[int]:
    """The `required` rows plus `extra` other rows drawn uniformly, sorted (an index over a KB subset)."""
    rows = set(required)
    rng = random.Random(seed)
    target = min(kb_size, len(rows) + extra)
    while len(rows) < target:
        rows.add(rng.randrange(kb_size))
    return sorted(rows)
