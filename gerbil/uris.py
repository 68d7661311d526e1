"""Entity URI expansion (GERBIL's sameAs retrievers, done offline) and InKB / emerging-entity classification."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import quote, unquote

# GERBIL's default well-known KBs (gerbil.properties, `DefaultWellKnownKB`).
KB_PREFIXES: tuple[str, ...] = (
    "http://dbpedia.org/resource/",
    "http://dbpedia.org/ontology/",
    "http://www.ontologydesignpatterns.org/ont/dul/DUL.owl",
    "http://www.ontologydesignpatterns.org/ont/d0.owl",
    "http://www.wikidata.org/entity/",
    "http://d-nb.info/",
)

_WIKI = "http://en.wikipedia.org/wiki/"
_DBPEDIA = "http://dbpedia.org/resource/"
# Bridged forms: (prefix found, prefix it is bridged to), as WikiDbPediaBridgingSameAsRetriever and
# ErrorFixingSameAsRetriever do for English; `dbpedia.org/page/` is the HTML view of the same resource
# and appears in some datasets in the wild.
_BRIDGES: tuple[tuple[str, str], ...] = (
    (_WIKI, _DBPEDIA),
    (_DBPEDIA, _WIKI),
    ("http://en.dbpedia.org/resource/", _DBPEDIA),
    ("http://dbpedia.org/page/", _DBPEDIA),
)
# What GERBIL's URL encoder leaves alone in a path segment, plus the characters DBpedia keeps literal.
_SAFE = "()_,'&!*-.~:@$;=+/"


def same_as_closure(pairs: Iterable[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """Groups URIs linked by `owl:sameAs` into equivalence classes (symmetric and transitive).

    Args:
        pairs: (subject, object) of every `owl:sameAs` triple.

    Returns:
        For every URI that occurs in a pair, the set of all URIs equivalent to it (itself included).
    """
    parent: dict[str, str] = {}

    def find(uri: str) -> str:
        parent.setdefault(uri, uri)
        while parent[uri] != uri:
            parent[uri] = parent[parent[uri]]
            uri = parent[uri]
        return uri

    for a, b in pairs:
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            parent[root_a] = root_b
    groups: dict[str, set[str]] = {}
    for uri in parent:
        groups.setdefault(find(uri), set()).add(uri)
    return {uri: frozenset(members) for members in groups.values() for uri in members}


def _variants(uri: str) -> set[str]:
    """The URIs GERBIL's stateless retrievers add for one URI (encoding variants and KB bridges)."""
    found = {uri}
    for prefix, target in _BRIDGES:
        if uri.startswith(prefix):
            found.add(target + uri[len(prefix):])
    for candidate in list(found):
        head, sep, last = candidate.rpartition("/")
        if not sep:
            continue
        decoded = unquote(last)
        found.add(f"{head}/{decoded}")
        found.add(f"{head}/{quote(decoded, safe=_SAFE)}")
        if candidate.startswith((_WIKI, _DBPEDIA)):
            # Wikipedia titles treat spaces and underscores alike.
            found.add(f"{head}/{decoded.replace(' ', '_')}")
    return found


class UriExpander:
    """Expands a URI set to its closure under encoding variants, KB bridges, sameAs and redirects.

    This replaces GERBIL's `CrawlingSameAsRetrieverDecorator` over its retrievers, with the dataset's
    own `owl:sameAs` links and an optional redirects table instead of the Wikipedia API and the DBpedia
    sameAs index.
    """

    def __init__(self, *, same_as: Mapping[str, frozenset[str]] | None = None,
                 redirects: Mapping[str, str] | None = None) -> None:
        """Args:
            same_as: URI → its `owl:sameAs` equivalence class (see `same_as_closure`).
            redirects: source URI → redirect target URI (targets are expanded too).
        """
        self.same_as = dict(same_as or {})
        self.redirects = dict(redirects or {})
        # Datasets repeat the same URIs many times; the closure of each is computed once.
        self._cache: dict[str, frozenset[str]] = {}

    def _closure(self, uri: str) -> frozenset[str]:
        seen: set[str] = set()
        todo = [uri]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            linked = set(_variants(current)) | set(self.same_as.get(current, ()))
            if current in self.redirects:
                linked.add(self.redirects[current])
            todo.extend(linked - seen)
        return frozenset(seen)

    def expand(self, uris: Iterable[str]) -> frozenset[str]:
        """The closure of a marking's URI set.

        Args:
            uris: the marking's URIs as given.

        Returns:
            All equivalent URIs (the input included).
        """
        expanded: set[str] = set()
        for uri in uris:
            if uri not in self._cache:
                self._cache[uri] = self._closure(uri)
            expanded |= self._cache[uri]
        return frozenset(expanded)


def is_in_kb(uris: Iterable[str], *, kb_prefixes: Iterable[str] = KB_PREFIXES) -> bool:
    """Whether a marking is InKB: any of its (expanded) URIs starts with a whitelisted KB prefix.

    Args:
        uris: the marking's expanded URI set.
        kb_prefixes: the KB namespace whitelist (GERBIL's default if not given).

    Returns:
        True for InKB, False for an emerging entity (EE).
    """
    prefixes = tuple(kb_prefixes)
    return any(uri.startswith(prefixes) for uri in uris)
