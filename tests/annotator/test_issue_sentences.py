"""Issue 45's four sentences of today's text, through the shipped linker on the shipped KB.

Text like them is the aim, not these four: they are here so that a shipped model that forgets today's world fails
a test.
"""
from __future__ import annotations

import pytest

from annotator import DEFAULT_MODEL_DIR, Linker

pytestmark = pytest.mark.slow  # loads the shipped checkpoint and its 100k-entity index


@pytest.fixture(scope="module")
def linker() -> Linker:
    return Linker.from_pretrained(DEFAULT_MODEL_DIR, device="cpu")


def links(linker: Linker, text: str) -> set[tuple[str, str | None]]:
    return {(mention.surface, mention.title) for mention in linker.link(text)}


@pytest.mark.parametrize(("text", "expected"), [
    ("Messi joined Paris Saint-Germain after leaving Barcelona.",
     {("Messi", "Lionel Messi"), ("Paris Saint-Germain", "Paris Saint-Germain F.C."), ("Barcelona", "FC Barcelona")}),
    ("Elon Musk bought Twitter for 44 billion dollars.", {("Elon Musk", "Elon Musk"), ("Twitter", "Twitter")}),
    # The tag view reads "@taylorswift13" as "taylor swift 13"; the mention is the whole handle without its sign.
    ("Can't wait to see @taylorswift13 in #London tonight!", {("taylorswift13", "Taylor Swift"), ("London", "London")}),
    # The reader barely tells the son from AIDA's George H. W. Bush; the initial written in the text decides
    # (annotator.pipeline.written_initials).
    ("George W. Bush signed the bill at the White House on Monday.",
     {("George W. Bush", "George W. Bush"), ("White House", "White House")}),
])
def test_todays_names_are_linked(linker: Linker, text: str, expected: set[tuple[str, str]]) -> None:
    assert links(linker, text) == expected

