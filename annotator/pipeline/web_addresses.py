"""Web addresses: nothing inside a URL is a mention.

Tweets end in short links ("http://bbc.in/nMfq5B"), which the reader, never shown one in training, reads as words:
on microposts2014-train the shipped linker made 39 links inside `http://` addresses, none of them a gold mention
(docs/decisions.md#web-addresses). Found links overlapping an address are dropped after every stage that adds links.
Given spans (D2KB) are answered whatever they hold.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.stages import Reading

URL = re.compile(r"\bhttps?://\S+", re.IGNORECASE)


@dataclass(frozen=True)
class WebAddresses:
    """Drops the found links that overlap a URL, as a post-processor. Nothing is read again."""

    def revise(self, documents: Sequence[Document], *, reading: Reading, decoding: DocumentDecoding) -> None:
        for document in documents:
            if document.given is None:
                document.links = outside_urls(document.text, document.links)


def outside_urls(text: str, links: Sequence[LinkedSpan]) -> list[LinkedSpan]:
    """The links of `text` that overlap no `http://` or `https://` address, in input order."""
    urls = [url.span() for url in URL.finditer(text)]
    return [link for link in links if all(link.end <= start or end <= link.start for start, end in urls)]
