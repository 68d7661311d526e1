"""URI expansion (bridges, encodings, sameAs closure, redirects) and InKB classification."""
from __future__ import annotations

from gerbil.uris import UriExpander, is_in_kb, same_as_closure

DBR = "http://dbpedia.org/resource/"


def test_wikipedia_and_dbpedia_bridge_both_ways() -> None:
    expander = UriExpander()
    assert DBR + "London" in expander.expand(["http://en.wikipedia.org/wiki/London"])
    assert "http://en.wikipedia.org/wiki/London" in expander.expand([DBR + "London"])


def test_en_dbpedia_and_page_forms_reach_the_resource() -> None:
    expander = UriExpander()
    assert DBR + "Paris" in expander.expand(["http://en.dbpedia.org/resource/Paris"])
    assert DBR + "Geneva" in expander.expand(["http://dbpedia.org/page/Geneva"])


def test_encoded_and_decoded_variants_meet() -> None:
    expander = UriExpander()
    encoded = expander.expand([DBR + "Z%C3%BCrich"])
    decoded = expander.expand([DBR + "Zürich"])
    assert DBR + "Zürich" in encoded and DBR + "Z%C3%BCrich" in decoded
    assert DBR + "Kurdistan_Workers'_Party" in expander.expand([DBR + "Kurdistan_Workers%27_Party"])


def test_same_as_closure_is_symmetric_and_transitive() -> None:
    groups = same_as_closure([("a", "b"), ("c", "b"), ("x", "y")])
    assert groups["a"] == groups["c"] == frozenset({"a", "b", "c"})
    assert groups["y"] == frozenset({"x", "y"})


def test_expansion_follows_same_as_and_redirects_to_closure() -> None:
    same_as = same_as_closure([("http://ex.org/A", "http://ex.org/B"), ("http://ex.org/B", DBR + "Old_Title")])
    expander = UriExpander(same_as=same_as, redirects={DBR + "Old_Title": DBR + "New_Title"})
    expanded = expander.expand(["http://ex.org/A"])
    assert {DBR + "Old_Title", DBR + "New_Title", "http://en.wikipedia.org/wiki/New_Title"} <= expanded


def test_in_kb_by_whitelisted_namespace() -> None:
    assert is_in_kb([DBR + "London"])
    assert is_in_kb(["http://www.wikidata.org/entity/Q84"])
    assert not is_in_kb(["http://aida/notInWiki/West+Bank", "*null*"])
    assert not is_in_kb(["https://www.wikidata.org/wiki/Q84"])  # needs extra configuration in GERBIL too
    assert not is_in_kb([])
    assert is_in_kb(["http://kb.example/X"], kb_prefixes=["http://kb.example/"])
