"""Tests for annotator.pipeline.web_addresses: nothing inside a URL is a mention."""
from __future__ import annotations

from types import SimpleNamespace

from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.web_addresses import WebAddresses, outside_urls


def _span(text: str, surface: str, entity: int = 0) -> LinkedSpan:
    start = text.index(surface)
    return LinkedSpan(start, start + len(surface), entity, 0.5)


def test_links_inside_an_address_go_and_the_others_stay() -> None:
    text = "BBC on phone hacking http://bbc.in/nMfq5B and HTTPS://Tumblr.com/x, see bbc"
    links = [_span(text, "BBC"), _span(text, "bbc.in"), _span(text, "Tumblr"), _span(text, "see bbc")]
    assert [text[s.start:s.end] for s in outside_urls(text, links)] == ["BBC", "see bbc"]


def test_given_spans_are_answered_whatever_they_hold() -> None:
    text = "read http://bbc.in/x"
    links = [_span(text, "bbc")]
    d2kb = SimpleNamespace(text=text, given=[(links[0].start, links[0].end)], links=list(links))
    a2kb = SimpleNamespace(text=text, given=None, links=list(links))
    WebAddresses().revise([d2kb, a2kb], reading=None, decoding=None)  # type: ignore[arg-type, list-item]
    assert d2kb.links == links and a2kb.links == []
