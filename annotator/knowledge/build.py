"""Building the knowledge tables offline, once per KB and mention table, into the cache (or a checkpoint's folder).

- **Graph.** Each description's mentions of other KB entries, found by the training passages' matcher
  (`annotator.training.description_passages.DescriptionMentions`: one Aho-Corasick automaton over the KB's titles,
  whole words, the longest match, no single-letter or date titles, a single word only where it has a description
  and does not start a sentence, no occurrence inside a longer capitalised name, no common noun). A description's
  own subject is no edge.
- **Prominence.** Each entry's in-links in that graph (`Knowledge.in_links`).
- **Name priors.** name → entries with two counts: the training links (the checkpoint's `mentions.tsv`, AIDA
  train's names and titles) and the KB's descriptions (the surface under which a description names an entry, and
  the names an entry's own lead gives it: its name at the start, a person's surname, an acronym in brackets).
  Every title, its form without a qualifier and its part before a comma are names of the entry too, at count 0,
  so that a lookup finds the entries a name titles even where nothing links them.
"""
from __future__ import annotations

import hashlib
import logging
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse
from tqdm import tqdm

from annotator.entity_index import identity_key
from annotator.kb.reading import kb_fingerprint
from annotator.knowledge.tables import FORMAT_VERSION, Knowledge, NamePriors
from annotator.model.encoders import cache_dir
from annotator.pipeline.mention_table import MentionTable
from annotator.training.data import KnowledgeBase
from annotator.training.description_passages import DescriptionMentions, is_disambiguation, subject_names

logger = logging.getLogger(__name__)

_MIN_NAME_CHARS = 2


def knowledge_identity(*, kb_path: str | Path, mention_table: str | Path | None) -> dict[str, Any]:
    """What a set of knowledge tables is built from: the KB file and the training links' table (sha256)."""
    table = (hashlib.sha256(Path(mention_table).read_bytes()).hexdigest()
             if mention_table is not None and Path(mention_table).is_file() else None)
    return {"format": FORMAT_VERSION, "kb_fingerprint": kb_fingerprint(kb_path), "mention_table": table}


def cached_knowledge_dir(identity: dict[str, Any]) -> Path:
    """The cache folder of the tables of `identity` ($ENTQA_CACHE/knowledge/<key>)."""
    return cache_dir() / "knowledge" / identity_key(identity)


def build_knowledge(kb: KnowledgeBase, mention_table: MentionTable | None, identity: dict[str, Any], *,
                    progress: bool = True) -> Knowledge:
    """The knowledge tables of `kb` (see the module's docstring); `identity` is stored with them."""
    started = time.perf_counter()
    finder = DescriptionMentions(kb)
    sources: list[int] = []
    targets: list[int] = []
    counts: defaultdict[str, dict[int, list[int]]] = defaultdict(dict)

    def count(name: str, row: int, *, linked: int = 0, described: int = 0) -> None:
        if len(name) >= _MIN_NAME_CHARS:
            pair = counts[name].setdefault(row, [0, 0])
            pair[0] += linked
            pair[1] += described

    for row, (title, text) in enumerate(tqdm(list(zip(kb.titles, kb.texts)), desc="reading descriptions",
                                             unit="entity", disable=not progress, mininterval=5)):
        for name in subject_names(title):
            count(name, row)
        if not text or is_disambiguation(text):
            continue
        found = finder.find(row)
        named: dict[tuple[str, int], None] = {}
        for start, end, hit in found.labelled:
            named[(text[start:end], hit)] = None
        for surface, hit in named:  # once per description
            count(surface, hit, described=1)
            if hit != row:
                sources.append(row)
                targets.append(hit)
    if mention_table is not None:
        for name, entries in mention_table.entities.items():
            for title, links in entries:
                if title in kb.row:
                    count(name, kb.row[title], linked=links)
    n = len(kb)
    graph = scipy.sparse.csr_matrix((np.ones(len(sources), dtype=np.int8), (np.array(sources, dtype=np.int64),
                                     np.array(targets, dtype=np.int64))), shape=(n, n))
    graph.sum_duplicates()
    graph.data[:] = 1
    priors = NamePriors.from_counts({name: {row: (pair[0], pair[1]) for row, pair in rows.items()}
                                     for name, rows in counts.items()})
    logger.info("knowledge of %d entities: %d graph edges, %d names, %d name-entity pairs in %.0f s", n, graph.nnz,
                len(priors), len(priors.rows), time.perf_counter() - started)
    return Knowledge(graph, priors, identity)

