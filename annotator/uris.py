"""Entity title ↔ DBpedia / Wikipedia IRIs, escaped the way DBpedia writes them; IRIs of NIL mentions."""
from __future__ import annotations

from urllib.parse import quote_plus, unquote

DBPEDIA_RESOURCE = "http://dbpedia.org/resource/"
WIKIPEDIA_PAGE = "http://en.wikipedia.org/wiki/"
# The same pages' web addresses, for people (the JSON API, the web page); GERBIL matches the http IRIs above.
WIKIPEDIA_WEB = "https://en.wikipedia.org/wiki/"
# Where the linker's NIL answers live: the namespace of the NIL IRIs in GERBIL's N3 datasets (Reuters-128), also
# used by other NIF annotators. Any IRI outside GERBIL's KB namespaces counts as an emerging entity there.
NIL_NAMESPACE = "http://aksw.org/"

# DBpedia escapes only what is not allowed in an IRI or would change its meaning; parentheses,
# commas, apostrophes, '&', '/' and non-ASCII letters stay literal (e.g. .../Zürich).
_ESCAPED = '"#%<>?[\\]^`{|}'


def _escape(title: str) -> str:
    path = title.strip().replace(" ", "_")
    return "".join(
        f"%{ord(c):02X}" if c in _ESCAPED or ord(c) < 0x20 or ord(c) == 0x7F else c for c in path
    )


def dbpedia_uri(title: str) -> str:
    """The DBpedia resource IRI of an enwiki title (spaces or underscores)."""
    return DBPEDIA_RESOURCE + _escape(title)


def wikipedia_uri(title: str) -> str:
    """The en.wikipedia.org page IRI of an enwiki title."""
    return WIKIPEDIA_PAGE + _escape(title)


def wikipedia_url(title: str) -> str:
    """The https address of an enwiki title's article, for a browser."""
    return WIKIPEDIA_WEB + _escape(title)


def not_in_wiki_uri(uri_prefix: str, surface: str) -> str:
    """GERBIL's artificial URI for a mention without a KB entity: `<prefix>notInWiki/<URL-encoded surface>`.

    The encoding is Java's `URLEncoder.encode(surface, "UTF-8")`: space → `+`, everything except
    `A-Za-z0-9 . - * _` percent-encoded (so `~` too, unlike Python's `quote_plus`).
    """
    return f"{uri_prefix}notInWiki/{quote_plus(surface, safe='*').replace('~', '%7E')}"


def title_from_uri(uri: str) -> str:
    """The title (with spaces, percent-decoded) of a DBpedia resource or Wikipedia page IRI."""
    for prefix in (DBPEDIA_RESOURCE, "https://dbpedia.org/resource/", WIKIPEDIA_PAGE,
                   "https://en.wikipedia.org/wiki/", "http://dbpedia.org/page/"):
        if uri.startswith(prefix):
            return unquote(uri[len(prefix):]).replace("_", " ")
    raise ValueError(f"not a DBpedia resource or en.wikipedia.org page IRI: {uri!r}")
