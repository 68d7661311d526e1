"""Benchmark datasets: NIF corpora (with their `owl:sameAs` links) and GERBIL's non-NIF originals."""
from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rdflib import OWL

from annotator.uris import dbpedia_uri
from gerbil import aida_conll, derczynski, msnbc
from gerbil.uris import UriExpander, same_as_closure
from nif import documents_in, load_graph
from nif.data_types import NifDocument

logger = logging.getLogger(__name__)

_RANGE = re.compile(r"#(\d+)-(\d+)$")


@dataclass(frozen=True)
class Dataset:
    """A benchmark dataset with what GERBIL needs to resolve its URIs.

    Attributes:
        name: the dataset's name in reports.
        documents: the documents with their gold annotations (offsets in code points).
        same_as: URI → its `owl:sameAs` equivalence class, from the dataset file itself.
        redirects: source URI → target URI (an optional table standing in for Wikipedia's redirects).
    """

    name: str
    documents: tuple[NifDocument, ...]
    same_as: Mapping[str, frozenset[str]] = field(default_factory=dict)
    redirects: Mapping[str, str] = field(default_factory=dict)

    def expander(self) -> UriExpander:
        """A URI expander over this dataset's sameAs links and redirects."""
        return UriExpander(same_as=self.same_as, redirects=self.redirects)


def load_nif(path: Path, *, name: str, redirects: Mapping[str, str] | None = None) -> Dataset:
    """Loads a NIF corpus: every context with `nif:isString`, plus the file's `owl:sameAs` links.

    Args:
        path: a Turtle file.
        name: the dataset's name.
        redirects: an optional redirects table (see `load_redirects`).

    Returns:
        The dataset.
    """
    graph = load_graph(path.read_bytes())
    pairs = [(str(s), str(o)) for s, o in graph.subject_objects(OWL.sameAs)]
    return Dataset(name, tuple(documents_in(graph)), same_as_closure(pairs), dict(redirects or {}))


def load_redirects(path: Path) -> dict[str, str]:
    """Reads a redirects table: one `source<TAB>target` per line, each a URI or an enwiki title.

    Args:
        path: the TSV file.

    Returns:
        Source URI → target URI (titles turned into DBpedia URIs).

    Raises:
        ValueError: a line does not hold exactly two columns (a table of another shape would otherwise
            turn its first two columns into nonsense redirects and change no score, silently).
    """
    table = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise ValueError(f"{path}:{number}: a redirects line is source<TAB>target, not {len(parts)} column(s)")
        source, target = (part if part.startswith("http") else dbpedia_uri(part) for part in parts)
        table[source] = target
    return table


def _aida_range(name: str, spec: str) -> tuple[int, int] | None:
    explicit = _RANGE.search(spec)
    if explicit:
        return int(explicit.group(1)), int(explicit.group(2))
    key = name.lower().rsplit("-", 1)[-1].removeprefix("test")
    return aida_conll.SPLITS.get(key)


def load_dataset(name: str, spec: str, *, redirects: Mapping[str, str] | None = None) -> Dataset:
    """Loads a dataset, choosing the reader from the path.

    A folder is MSNBC (`Problems/` + `RawTextsSimpleChars_utf8/`); `*.tsv` is AIDA-CoNLL, restricted to
    the document range `#first-last` at the end of `spec` or, failing that, to the split named by the
    name's last `-` part (`train`, `a`/`testa`, `b`/`testb`); `*.conll` is Derczynski IPM NEL; anything
    else is read as NIF Turtle.

    Args:
        name: the dataset's name in reports.
        spec: the path, optionally followed by an AIDA document range.
        redirects: an optional redirects table (see `load_redirects`).

    Returns:
        The dataset.
    """
    path = Path(_RANGE.sub("", spec))
    if path.is_dir():
        documents = msnbc.read_documents(path)
    elif path.suffix == ".tsv":
        span = _aida_range(name, spec)
        first, last = span if span else (None, None)
        with path.open(encoding="utf-8") as lines:
            documents = aida_conll.read_documents(lines, first=first, last=last)
    elif path.suffix == ".conll":
        with path.open(encoding="utf-8") as lines:
            documents = derczynski.read_documents(lines)
    else:
        return load_nif(path, name=name, redirects=redirects)
    logger.info("%s: %d documents from %s", name, len(documents), path)
    return Dataset(name, tuple(documents), {}, dict(redirects or {}))
