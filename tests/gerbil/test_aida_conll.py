"""GERBIL's AIDA-CoNLL reader: the token-joining rule, document split, NIL URIs and split ranges."""
from __future__ import annotations

from pathlib import Path

from gerbil.aida_conll import SPLITS, join_tokens, read_documents


def test_join_rule_on_hand_written_tokens() -> None:
    text, starts = join_tokens(["Ada", "said", '"', "it", "'s", "fine", '"', "(", "BSE", ")", "."])
    assert text == 'Ada said "it\'s fine" (BSE).'
    assert [text[s:s + len(t)] for s, t in zip(starts, ["Ada", "said", '"', "it"])] == ["Ada", "said", '"', "it"]


def test_no_space_before_closing_punctuation_and_after_opening_brackets() -> None:
    assert join_tokens(["a", "?", "b", "!", "c", ",", "[", "d", "]", "{", "e", "}", "."])[0] == "a? b! c, [d] {e}."


def test_multi_character_token_starting_with_a_non_letter_or_digit_gets_no_space() -> None:
    assert join_tokens(["Paris", "--", "again", "'s", "1990s", "-", "x"])[0] == "Paris-- again's 1990s - x"


def test_quotes_alternate_opening_and_closing() -> None:
    # A leading quote is not counted (GERBIL skips the rule for a document's first token), so the
    # next quote opens and the state stays shifted by one for the rest of the document.
    assert join_tokens(['"', "a", '"', "b", '"', "c", '"'])[0] == '" a "b" c "'
    assert join_tokens(["x", '"', "a", '"', "b", '"', "c", '"'])[0] == 'x "a" b "c"'


def test_letters_and_digits_follow_java_rules() -> None:
    # Non-ASCII letters are letters; a token starting with a superscript digit is not a digit in Java.
    assert join_tokens(["a", "Émile", "²x"])[0] == "a Émile²x"


def test_reads_documents_mentions_and_nil(resources: Path) -> None:
    with (resources / "synthetic_conll.tsv").open(encoding="utf-8") as lines:
        docs = read_documents(lines)
    assert [d.uri for d in docs] == ["http://aida/0", "http://aida/1", "http://aida/2"]
    first = docs[0]
    assert first.text == 'Ada Lovelace said "it\'s fine" (Grimble Fotherby). London wins.'
    spans = [(first.text[a.start:a.end], a.uris) for a in first.annotations]
    assert spans == [
        ("Ada Lovelace", ("http://en.wikipedia.org/wiki/Ada_Lovelace", "http://dbpedia.org/resource/Ada_Lovelace")),
        ("Grimble Fotherby", ("http://aida/notInWiki/Grimble+Fotherby",)),
        ("London", ("http://en.wikipedia.org/wiki/London", "http://dbpedia.org/resource/London")),
    ]
    # A document's first token leaves the quote state alone (GERBIL skips the rule for it).
    assert docs[1].text == '" Hello "said Zürich.'
    assert docs[2].text == "Paris-- again."


def test_document_range_is_one_based_and_inclusive(resources: Path) -> None:
    with (resources / "synthetic_conll.tsv").open(encoding="utf-8") as lines:
        docs = read_documents(lines, first=2, last=3)
    assert [d.uri for d in docs] == ["http://aida/1", "http://aida/2"]


def test_gerbil_splits() -> None:
    assert SPLITS == {"train": (1, 946), "a": (947, 1162), "b": (1163, 1393)}
