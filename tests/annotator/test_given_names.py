"""Tests for annotator.kb.given_names: the first words of people's titles, where several people bear them."""
from __future__ import annotations

from annotator.kb.descriptions import EntityDescriptions
from annotator.kb.given_names import given_names


def test_a_given_name_is_the_first_word_of_three_people_or_more() -> None:
    titles = ["Neil Jordan", "Neil Young", "Neil Armstrong (astronaut)", "Air France", "Air Canada", "Air India",
              "Paul Smith", "Paul Jones", "Paul Allen", "Neil"]
    texts = ["Neil Patrick Jordan (born 25 February 1950) is an Irish film director.",
             "Neil Percival Young (born November 12, 1945) is a Canadian singer.",
             "Neil Alden Armstrong (Wapakoneta; b. August 5, 1930) was an astronaut.",
             "Air France is an airline.", "Air Canada is an airline.", "Air India is an airline.",
             "Paul Smith (born 1946) is a designer.", "Paul Jones (born Paul Pond; 24 February 1942) is a singer.",
             "", "Neil (born 1970) is a singer."]
    # "Air" begins no person's title; "Paul" two people's (the title-only Paul Allen tells nothing); a one-word title
    # is no given name and surname
    assert given_names(titles, EntityDescriptions.from_texts(texts)) == frozenset({"Neil"})
