"""Dataset loading: NIF in the shapes found in the wild, OKE-style sameAs, format dispatch, redirects."""
from __future__ import annotations

from pathlib import Path

import pytest

from gerbil.client import Answer, Task
from gerbil.datasets import load_dataset, load_nif, load_redirects
from gerbil.experiment import evaluate, to_markings
from nif.data_types import NifAnnotation

DBR = "http://dbpedia.org/resource/"


def test_gerbil_shape(resources: Path) -> None:
    dataset = load_nif(resources / "gerbil_shape.ttl", name="shape")
    assert [len(d.annotations) for d in dataset.documents] == [3, 2, 0]
    assert dataset.documents[0].text == "Ada Lovelace worked with Babbage in London."


def test_wild_shapes(resources: Path) -> None:
    (doc,) = load_nif(resources / "wild_shapes.ttl", name="wild").documents
    assert doc.text == "Zürich and Geneva met Paris."
    # The span without an end index is ignored; two taIdentRef are both kept.
    assert [(a.start, a.end) for a in doc.annotations] == [(0, 6), (11, 17)]
    assert set(doc.annotations[0].uris) == {DBR + "Z%C3%BCrich", "http://www.wikidata.org/entity/Q72"}


def test_page_uri_and_encoded_uri_match_plain_resource_predictions(resources: Path) -> None:
    dataset = load_nif(resources / "wild_shapes.ttl", name="wild")
    answer = Answer((NifAnnotation(0, 6, (DBR + "Zürich",)), NifAnnotation(11, 17, (DBR + "Geneva",))), 0.0)
    scores = evaluate(dataset, [answer], task=Task.A2KB)
    assert scores["inkb"].counts.tp == 2 and scores["inkb"].micro.f1 == 1.0


def test_oke_same_as_resolves_gold_into_the_kb(resources: Path) -> None:
    dataset = load_nif(resources / "synthetic_same_as.ttl", name="oke")
    (doc,) = dataset.documents
    gold = to_markings(doc.annotations, expander=dataset.expander())
    assert [m.in_kb for m in gold] == [True, False]  # Quibble Marchbanks has no link: emerging
    answer = Answer((NifAnnotation(0, 12, (DBR + "Ada_Lovelace",)),
                     NifAnnotation(22, 40, ("http://aksw.org/notInWiki/whatever",))), 0.0)
    scores = evaluate(dataset, [answer], task=Task.A2KB)
    assert scores["all"].counts.tp == 2 and scores["inkb"].counts.tp == 1 and scores["ee"].counts.tp == 1


def test_dispatch_by_path(resources: Path) -> None:
    assert len(load_dataset("aida-b", str(resources / "synthetic_conll.tsv") + "#2-3").documents) == 2
    assert len(load_dataset("aida-full", str(resources / "synthetic_conll.tsv")).documents) == 3
    assert len(load_dataset("msnbc", str(resources / "msnbc")).documents) == 1
    assert len(load_dataset("derczynski", str(resources / "derczynski.conll")).documents) == 2
    assert len(load_dataset("shape", str(resources / "gerbil_shape.ttl")).documents) == 3


def test_aida_split_named_by_dataset_name(resources: Path) -> None:
    # The fixture has three documents, so the AIDA-A range (947-1162) leaves none.
    assert load_dataset("aida-a", str(resources / "synthetic_conll.tsv")).documents == ()
    assert len(load_dataset("aida-train", str(resources / "synthetic_conll.tsv")).documents) == 3


def test_redirects_table_turns_titles_into_uris(tmp_path: Path, resources: Path) -> None:
    table = tmp_path / "redirects.tsv"
    table.write_text(f"Florida Marlins\tMiami Marlins\n{DBR}Old\t{DBR}New\n", encoding="utf-8")
    redirects = load_redirects(table)
    assert redirects == {DBR + "Florida_Marlins": DBR + "Miami_Marlins", DBR + "Old": DBR + "New"}
    dataset = load_dataset("shape", str(resources / "gerbil_shape.ttl"), redirects=redirects)
    assert dataset.redirects == redirects


def test_a_table_of_another_shape_is_refused_with_its_line(tmp_path: Path) -> None:
    # e.g. ../shared/data/aida/dev_title_variants.tsv, whose renames need picking out first
    table = tmp_path / "variants.tsv"
    table.write_text("Old\tNew\ndoc_uri\tbegin\tend\tanchor\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"variants\.tsv:2: .* not 4 column"):
        load_redirects(table)
