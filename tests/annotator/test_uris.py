"""Tests for annotator.uris."""
from __future__ import annotations

from annotator.uris import not_in_wiki_uri


def test_not_in_wiki_uri_uses_java_url_encoding() -> None:
    assert not_in_wiki_uri("http://aida/", "West Bank") == "http://aida/notInWiki/West+Bank"
    assert not_in_wiki_uri("http://aida/", "Zé ~ *a-b_c.") == "http://aida/notInWiki/Z%C3%A9+%7E+*a-b_c."
