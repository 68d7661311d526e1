"""Tests for bench.kb_coverage: InKB gold through owl:sameAs, and the held shares of mentions and entities."""
from __future__ import annotations

from bench.kb_coverage import gold_title_sets, held_share
from gerbil.datasets import Dataset
from gerbil.uris import same_as_closure
from nif.data_types import NifAnnotation, NifDocument

OKE = "http://www.ontologydesignpatterns.org/data/oke-challenge/task-1/"
DBPEDIA = "http://dbpedia.org/resource/"


def test_gold_reaches_dbpedia_through_same_as_and_emerging_entities_are_left_out() -> None:
    text = "Ada met Charles and a man in London."
    document = NifDocument("http://example.org/d", text, (
        NifAnnotation(0, 3, (OKE + "Ada",)), NifAnnotation(8, 15, (OKE + "Charles",)),
        NifAnnotation(22, 25, (OKE + "man",)), NifAnnotation(29, 35, (DBPEDIA + "London",))))
    dataset = Dataset("made-up", (document,), same_as_closure([(OKE + "Ada", DBPEDIA + "Ada_Lovelace"),
                                                               (OKE + "Charles", DBPEDIA + "charles_Babbage")]))
    golds = gold_title_sets(dataset)
    assert golds == [{"Ada Lovelace"}, {"Charles Babbage"}, {"London"}]  # "man" has no DBpedia link: EE


def test_held_share_counts_mentions_and_distinct_entities() -> None:
    golds = [frozenset({"London"}), frozenset({"London"}), frozenset({"Paris", "Paris, France"}), frozenset({"Oslo"})]
    assert held_share(golds, {"London", "Paris, France"}) == (75.0, 100 * 2 / 3)
    assert held_share([], {"London"}) == (0.0, 0.0)
