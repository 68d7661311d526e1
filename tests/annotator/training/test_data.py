from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotator.training.data import (CorpusDocument, Fold, TitleLookup, build_documents, description_dropout,
                                     fold_numbers, load_kb, passages_with_golds, wordpiece_span)
from annotator.cli.corpora import read_corpus


@pytest.fixture
def documents(corpus_path, kb_path, builder):
    kb = load_kb(kb_path)
    lookup = TitleLookup(kb)
    return kb, lookup, build_documents(read_corpus(corpus_path), builder, lookup)


def test_wordpiece_span_covers_exactly_the_mention():
    offsets = [(0, 3), (4, 8), (8, 12), (13, 18)]
    assert wordpiece_span(offsets, 4, 12) == (1, 2)
    assert wordpiece_span(offsets, 13, 18) == (3, 3)
    assert wordpiece_span(offsets, 12, 13) is None


def test_gold_mentions_sit_in_every_passage_that_contains_them(documents, builder):
    kb, _, docs = documents
    for doc in docs:
        tokens = builder.tokenize_document(doc.text)
        linked = {(g.start, g.end) for g in doc.gold_links}
        for passage in doc.passages:
            first, last = passage.passage.token_start, passage.passage.token_start + len(passage.passage.ids) - 1
            found = set()
            for gold in passage.golds:
                start, end = passage.passage.offsets[gold.start][0], passage.passage.offsets[gold.end][1]
                assert (start, end) in linked
                assert doc.text[start:end].casefold() == kb.titles[gold.row].casefold()
                found.add((start, end))
            # Every linked mention whose wordpieces all fall inside the window is assigned to it.
            for start, end in linked:
                pieces = wordpiece_span(tokens.offsets, start, end)
                in_kb = doc.text[start:end] != "Lake Geneva"
                if in_kb and first <= pieces[0] and pieces[1] <= last:
                    assert (start, end) in found
    assert passages_with_golds(docs)


def test_title_lookup_counts_how_titles_were_found(documents):
    _, lookup, docs = documents
    assert lookup.outcomes == {"exact": 4, "normalised": 1, "case-insensitive": 1, "missing": 1}
    assert set(lookup.missing) == {"Lake Geneva"}
    # NIL mentions are not gold spans; the missing title still is (it can be predicted, not trained on).
    assert len(docs[0].gold_links) == 3 and len(docs[1].gold_links) == 4


def test_description_dropout_matches_title_only_shares():
    p_gold, p_negative = description_dropout(0.3, 0.5)
    assert p_negative == 0.0
    assert 0.3 + 0.7 * p_gold == pytest.approx(0.5)
    p_gold, p_negative = description_dropout(0.6, 0.5)
    assert p_gold == 0.0
    assert 0.5 + 0.5 * p_negative == pytest.approx(0.6)


@given(documents=st.integers(1, 60), folds=st.integers(1, 6))
def test_folds_are_runs_of_consecutive_documents_that_partition_the_corpus(documents, folds):
    corpus = [CorpusDocument(f"d{i}", "text") for i in range(documents)]
    numbers = fold_numbers(documents, folds)
    assert numbers == sorted(numbers) and set(numbers) <= set(range(folds))
    for number in range(1, folds + 1):
        fold = Fold(number, folds)
        held, left = fold.holds(corpus), fold.leaves(corpus)
        assert sorted(held + left, key=lambda d: int(d.uri[1:])) == corpus
        assert not {d.uri for d in held} & {d.uri for d in left}
        if documents >= folds:
            assert held  # no fold empty where each can hold a document


def test_a_fold_is_written_k_of_n_and_a_bad_one_names_the_form():
    assert Fold.parse("2/3") == Fold(2, 3) and str(Fold(2, 3)) == "2/3"
    for text, message in [("0/2", "from 1 to 2"), ("3/2", "from 1 to 2"), ("half", "K/N"), ("1/2/3", "K/N")]:
        with pytest.raises(ValueError, match=message):
            Fold.parse(text)
