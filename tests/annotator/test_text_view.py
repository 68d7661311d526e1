"""The models' view of a text: #hashtags and @handles read as words, offsets mapped back exactly."""
from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from annotator.pipeline.linker import Linker
from annotator.pipeline.text_view import TagReader, TextView
from tests.support.scripted_linker import scripted_linker

TITLES = ["Paris", "Paris Hilton", "Ada Lovelace", "Taylor Swift", "The Rapist", "Chris Brown (singer)", "Ab Cd"]
VOCABULARY = {"therapist", "paris", "the"}
READER = TagReader(TITLES, VOCABULARY)


def test_a_tag_sign_becomes_a_space_and_its_name_is_cut_into_words() -> None:
    assert READER.view("RT @ParisHilton: #WorldCup2014").text == "RT  Paris Hilton:  World Cup 2014"
    assert READER.view("@Oprah_World #USOpen #iPhone4S").text == " Oprah World  US Open  i Phone 4 S"


def test_lower_case_names_are_cut_where_they_spell_a_multi_word_title() -> None:
    assert READER.view("@taylorswift13 and @adalovelace").text == " taylor swift 13 and  ada lovelace"
    assert READER.view("#ChrisBrown #chrisbrown").text == " Chris Brown  chris brown"  # the qualifier is no word


def test_words_of_the_vocabulary_short_runs_and_unknown_runs_stay_whole() -> None:
    assert READER.view("#therapist #abcd #parishiltonx").text == " therapist  abcd  parishiltonx"


def test_text_without_tags_is_its_own_view() -> None:
    for text in ("Ada Lovelace in Paris.", "mail me@example.org", "see http://x.org/#top", "it&#39;s", "C# and @"):
        assert READER.view(text) == TextView(text)


def test_offsets_map_back_to_the_name_without_its_sign() -> None:
    text = "Crowd for @ChrisBrown tonight"
    view = READER.view(text)
    start = view.text.index("Chris Brown")
    assert view.to_original(start, start + len("Chris Brown")) == (text.index("ChrisBrown"), text.index(" tonight"))
    assert view.to_original(start + len("Chris "), start + len("Chris Brown")) == (text.index("Brown"),
                                                                                  text.index(" tonight"))
    assert view.to_view([(text.index("ChrisBrown"), text.index(" tonight"))]) == [(start, start + 11)]


def test_a_name_found_alone_inside_a_tag_takes_the_whole_tag() -> None:
    text = "@taylorswift13 met @ParisHilton and #WhiteSox fans in Lyon"
    view = READER.view(text)

    def found(*surfaces: str) -> list[str]:
        spans = []
        for surface in surfaces:
            start = view.text.index(surface)
            spans.append((start, start + len(surface)))
        return [text[start:end] for start, end in view.found_to_original(spans)]

    # One name in a tag takes the tag; two in one tag keep their own; text outside tags is as found.
    assert found("taylor swift", "Paris", "Sox") == ["taylorswift13", "ParisHilton", "WhiteSox"]
    assert found("White", "Sox", "Lyon") == ["White", "Sox", "Lyon"]


@given(st.text(alphabet="ab_C1 #@&/.", max_size=40), st.data())
def test_every_original_span_maps_to_the_view_and_back(text: str, data: st.DataObject) -> None:
    view = READER.view(text)
    assert [c for c, i in zip(view.text, view.origin or range(len(text))) if i < 0] == \
        [" "] * (len(view.text) - len(text))
    for character, origin in zip(view.text, view.origin or range(len(text))):
        if origin >= 0:
            assert character == text[origin] or (character == " " and text[origin] in "#@_")
    if text:
        start = data.draw(st.integers(0, len(text) - 1))
        end = data.draw(st.integers(start + 1, len(text)))
        (view_start, view_end), = view.to_view([(start, end)])
        assert view.to_original(view_start, view_end) == (start, end)


def test_the_linker_reads_tags_as_names_and_answers_in_the_original_offsets(tiny_linker: Linker) -> None:
    text = "RT @adalovelace: tonight at #LakeGeneva"
    linker = scripted_linker(tiny_linker, threshold=0.05)
    assert [(m.surface, m.title, m.start, m.end) for m in linker.link(text)] == \
        [("adalovelace", "Ada Lovelace", 4, 15), ("LakeGeneva", "Lake Geneva", 29, 39)]
    assert [(m.surface, m.title) for m in linker.link(text, [(4, 15), (29, 39)])] == \
        [("adalovelace", "Ada Lovelace"), ("LakeGeneva", "Lake Geneva")]
    assert dataclasses.replace(linker, text_view=_Unchanged()).link(text) == []


class _Unchanged:
    def view(self, text: str) -> TextView:
        return TextView(text)
