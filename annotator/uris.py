"""Entity title ↔ DBpedia / Wikipedia IRIs, escaped the way DBpedia writes them."""
from __future__ import annotations

from urllib.parse import unquote

DBPEDIA_RESOURCE = "http://dbpedia.org/resource/"
WIKIPEDIA_PAGE = "http://en.wikipedia.org/wiki/"

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


def title_from_uri(uri: str) -> str:
    """The title (with spaces, percent-decoded) of a DBpedia resource or Wikipedia page IRI."""
    for prefix in (DBPEDIA_RESOURCE, "https://dbpedia.org/resource/", WIKIPEDIA_PAGE,
                   "https://en.wikipedia.org/wiki/", "http://dbpedia.org/page/"):
        if uri.startswith(prefix):
            return unquote(uri[len(prefix):]).replace("_", " ")
    raise ValueError(f"not a DBpedia resource or en.wikipedia.org page IRI: {uri!r}")
