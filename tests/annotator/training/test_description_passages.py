from __future__ import annotations

import gzip
import json
import random

import pytest
import torch

from annotator.training.data import KnowledgeBase, gold_title_only_share
from annotator.training.description_passages import (DESCRIPTION_URI, DescriptionMentions, description_documents,
                                                     is_date_title, subject_names)
from annotator.training.reader_trainer import ReaderTrainer, ReaderTrainingConfig
from annotator.training.retriever_trainer import RetrieverTrainer, RetrieverTrainingConfig
from annotator.cli.train import main

from .conftest import KB as FIXTURE_KB

# Hand-written entries (no KB text); each sentence of the first one exercises one rule.
ENTRIES = [
    ("Tampico, Illinois",
     "Tampico is a small village in Whiteside County, Illinois, in the United States. Apple orchards surround it. "
     "Tampico once had a mill that a Chicago-based firm bought. Its football club shares a name with Nueva Chicago "
     "and its bank had London Stock Exchange shares. In Paris a Russian writer praised it. The village sells "
     "pies on eBay, fans of the Eagles and the Blue Herons meet there, and its fair opens on February 10."),
    ("Tampico", "Tampico is a port city in Mexico."),
    ("Whiteside County, Illinois", "Whiteside County is a county."),
    ("Illinois", "Illinois is a state."),
    ("United States", "The United States is a country."),
    ("Apple", "Apple is a fruit."),
    ("Chicago", "Chicago is a city."),
    ("London", "London is a city."),
    ("Paris", "Paris is a city."),
    ("Russian", "Russian refers to several things."),
    ("eBay", "eBay is a marketplace."),
    ("Eagles", ""),
    ("Blue Herons", ""),
    ("February 10", "February 10 is a day of the year, the forty-first of the Gregorian calendar, with many events."),
    ("Lionel Messi",
     "Lionel Messi is an Argentine footballer who plays as a forward for Inter Miami in Major League Soccer and "
     "captains the Argentina national team. He grew up in Rosario and moved to Barcelona as a boy, where he "
     "spent most of his career before a short spell in Paris."),
    ("Inter Miami", "Inter Miami is a football club."),
    ("Major League Soccer", "Major League Soccer is a league."),
    ("Rosario", "Rosario is a city in Argentina."),
    ("Barcelona", "Barcelona is a city in Spain."),
    ("Lovelace (film)",
     "Lovelace is a drama film about an actress, shot in London and set in the seventies. Critics in Chicago and "
     "in Paris wrote about it at length, and it was shown at festivals in several countries during its first year."),
    ("Hello program",
     "A hello program is a short computer program that prints a greeting; teachers in London use it as the first "
     "example of a language, because it shows how a program is written, compiled and run on a machine."),
    ("Mercury",
     "Mercury may refer to: a planet of the Solar System, a chemical element, a Roman god, a car brand made in "
     "Detroit, a record label based in London, a newspaper, a space programme or any of several other things."),
    ("Geneva", "Geneva is a city in Switzerland. It lies on a lake near France."),
    ("Penn Badgley",
     "Penn Dayton Badgley is an American actor and singer who grew up in Baltimore and Seattle. Badgley is best "
     "known for two television series, and he also sings in a band that formed in London, which has recorded two "
     "albums so far."),
    ("Cincinnati Bengals",
     "The Cincinnati Bengals are a professional American football team based in Cincinnati, Ohio. The Bengals "
     "play their home games at a stadium on the river and have reached the final game of the season three times "
     "in their long history."),
]


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase([t for t, _ in ENTRIES], [d for _, d in ENTRIES])


@pytest.fixture(scope="module")
def finder(kb) -> DescriptionMentions:
    return DescriptionMentions(kb)


def labelled(kb: KnowledgeBase, finder: DescriptionMentions, title: str) -> list[tuple[str, str]]:
    """(surface, title) of the mentions found in `title`'s description."""
    text = kb.texts[kb.row[title]]
    return [(text[s:e], kb.titles[row]) for s, e, row in finder.find(kb.row[title]).labelled]


def test_subject_names_are_the_title_then_without_its_qualifier():
    assert subject_names("Lionel Messi") == ["Lionel Messi"]
    assert subject_names("Tampico, Illinois") == ["Tampico, Illinois", "Tampico"]
    assert subject_names("Lovelace (film)") == ["Lovelace (film)", "Lovelace"]
    assert subject_names("Friends of Cats, Dogs, and Birds") == ["Friends of Cats, Dogs, and Birds"]  # a list


@pytest.mark.parametrize("title", ["February 10", "10 February", "March 1996", "May", "January 5, 1990"])
def test_dates_are_date_titles(title):
    assert is_date_title(title)
    assert not is_date_title(f"{title} Street")


def test_the_subject_is_labelled_at_the_start_and_where_its_name_recurs(kb, finder):
    mentions = labelled(kb, finder, "Tampico, Illinois")
    # Not *Tampico* the Mexican city: the description's own name, even at a sentence's start.
    assert mentions[0] == ("Tampico", "Tampico, Illinois") and mentions.count(("Tampico", "Tampico, Illinois")) == 2
    assert ("Tampico", "Tampico") not in mentions
    assert labelled(kb, finder, "Lionel Messi")[0] == ("Lionel Messi", "Lionel Messi")
    assert labelled(kb, finder, "Lovelace (film)")[0] == ("Lovelace", "Lovelace (film)")
    # with middle names, and after "The", which stays outside the mention
    assert labelled(kb, finder, "Penn Badgley")[0] == ("Penn Dayton Badgley", "Penn Badgley")
    assert labelled(kb, finder, "Cincinnati Bengals")[0] == ("Cincinnati Bengals", "Cincinnati Bengals")
    assert finder.subject_span(kb.row["Cincinnati Bengals"]) == (4, 22)
    found = finder.find(kb.row["Lionel Messi"])
    assert found.subject_labelled and kb.row["Lionel Messi"] not in found.unlabelled_rows


def test_the_subjects_short_forms_are_labelled_where_they_recur(kb, finder):
    assert ("Badgley", "Penn Badgley") in labelled(kb, finder, "Penn Badgley")  # a person's surname
    # no surname without a personal pronoun (a team)
    assert ("Bengals", "Cincinnati Bengals") not in labelled(kb, finder, "Cincinnati Bengals")
    acronyms = KnowledgeBase(
        ["National Football League", "United States", "Ken Griffey Jr."],
        ["The National Football League (NFL) is a professional American football league. The NFL is one of the "
         "major professional sports leagues in the United States.", "The United States is a country.",
         "Ken Griffey Jr. is an American former baseball outfielder. Jr. is how scoreboards listed him, and he hit "
         "more than six hundred home runs."])
    short = DescriptionMentions(acronyms)
    assert labelled(acronyms, short, "National Football League") == [
        ("National Football League", "National Football League"), ("NFL", "National Football League"),
        ("NFL", "National Football League"), ("United States", "United States")]  # an acronym in brackets
    assert labelled(acronyms, short, "Ken Griffey Jr.") == [("Ken Griffey Jr.", "Ken Griffey Jr.")]  # no suffix


def test_a_subject_not_named_at_the_start_is_unlabelled_and_no_negative(kb, finder):
    found = finder.find(kb.row["Hello program"])
    assert not found.subject_labelled
    assert kb.row["Hello program"] in found.unlabelled_rows
    assert labelled(kb, finder, "Hello program") == [("London", "London")]


def test_other_titles_follow_the_rules(kb, finder):
    mentions = labelled(kb, finder, "Tampico, Illinois")
    titles = {title for _, title in mentions}
    assert ("Whiteside County, Illinois", "Whiteside County, Illinois") in mentions  # the longest match wins ...
    assert "Illinois" not in titles  # ... over the titles inside it
    assert ("United States", "United States") in mentions  # after a lowercase word
    assert ("Paris", "Paris") in mentions  # after a capitalised word that starts the sentence
    assert "Apple" not in titles  # a single word that starts a sentence
    assert "Chicago" not in titles  # inside a hyphenated word (Chicago-based) or a longer name (Nueva Chicago)
    assert "London" not in titles  # followed by a capitalised word (London Stock Exchange)
    assert "Russian" not in titles  # a disambiguation entry
    assert "eBay" not in titles  # not capitalised
    assert "Eagles" not in titles  # a single word without a description ...
    assert ("Blue Herons", "Blue Herons") in mentions  # ... which a longer title-only name may be
    assert "February 10" not in titles  # a date
    unlabelled = {kb.titles[r] for r in finder.find(kb.row["Tampico, Illinois"]).unlabelled_rows}
    assert unlabelled == {"Apple", "Chicago", "London"}  # what the rules rejected, kept out of the negatives


def test_common_nouns_are_labelled_nowhere_and_no_negatives():
    # The reader's wordpieces are uncased: a label on "the Senate" would teach it to link "senate" anywhere.
    kb = KnowledgeBase(["Cicero", "Senate", "Rome", "Country music"], [
        "Cicero was a Roman statesman. He spoke in the Senate of Rome for decades and wrote letters.",
        "A senate is a deliberative assembly, often the upper house of a legislature.",
        "Rome is the capital city of Italy.",
        "Country music is a genre of popular music; country music began in the southern United States.",
    ])
    finder = DescriptionMentions(kb)
    assert [finder.is_common_noun(row) for row in range(len(kb))] == [False, True, False, True]
    statesman = finder.find(kb.row["Cicero"])
    assert [kb.titles[row] for _, _, row in statesman.labelled] == ["Cicero", "Rome"]
    assert statesman.unlabelled_rows == {kb.row["Senate"]}
    genre = finder.find(kb.row["Country music"])  # the subject too
    assert not genre.labelled and genre.unlabelled_rows == {kb.row["Country music"]}


def test_short_date_and_disambiguation_descriptions_are_no_documents(kb, finder):
    assert not finder.usable(kb.row["Geneva"])  # under MIN_DESCRIPTION_CHARS
    assert not finder.usable(kb.row["February 10"])
    assert not finder.usable(kb.row["Mercury"])
    assert finder.usable(kb.row["Lionel Messi"])


def test_documents_hold_the_passages_asked_for_with_golds_on_their_text(kb, finder, builder):
    documents = description_documents(kb, builder, 7, seed=1, finder=finder)
    passages = [p for d in documents for p in d.passages if p.golds]
    assert len(passages) == 7
    assert all(finder.find(kb.row[d.uri.removeprefix(DESCRIPTION_URI)]).labelled == tuple(
        (g.start, g.end, kb.row[g.title]) for g in d.gold_links) for d in documents)
    usable = {"Tampico, Illinois", "Lionel Messi", "Lovelace (film)", "Hello program", "Penn Badgley",
              "Cincinnati Bengals"}
    for document in documents:
        title = document.uri.removeprefix(DESCRIPTION_URI)
        assert title in usable and document.text == kb.texts[kb.row[title]]
        for passage in document.passages:
            assert passage.title_only_rows == {kb.row[title]}  # its own description is the passage
            for gold in passage.golds:
                start, end = passage.passage.offsets[gold.start][0], passage.passage.offsets[gold.end][1]
                assert any((g.start, g.end) == (start, end) and g.title == kb.titles[gold.row]
                           for g in document.gold_links)
    assert not description_documents(kb, builder, 0, seed=1, finder=finder)


def test_documents_are_deterministic_given_the_seed(kb, finder, builder):
    def titles(seed: int) -> list[str]:
        return [d.uri for d in description_documents(kb, builder, 30, seed=seed, finder=finder)]

    assert titles(3) == titles(3)
    assert {tuple(titles(seed)) for seed in range(6)} != {tuple(titles(3))}  # another seed, another order


@pytest.fixture
def mixed(kb, finder, builder):
    return description_documents(kb, builder, 30, seed=0, finder=finder)


def test_reader_shows_the_subject_title_only_and_never_its_unlabelled_names(kb, mixed, retriever, reader, builder,
                                                                           linker_config, tmp_path):
    config = ReaderTrainingConfig(candidates=6, candidate_kb_size=len(kb), eval_kb_size=2)
    trainer = ReaderTrainer(reader, retriever, builder, kb, mixed, mixed, config=config, linker_config=linker_config,
                            device=torch.device("cpu"), out=tmp_path)
    for example in trainer.examples:
        assert not set(example.candidates) & example.passage.unlabelled_rows
    hello = kb.row["Hello program"]
    assert any(hello in e.passage.unlabelled_rows for e in trainer.examples)
    shown = []
    builder_inputs = builder.entity_inputs
    builder.entity_inputs = lambda titles, texts: shown.append(dict(zip(titles, texts))) or builder_inputs(titles, texts)
    try:
        for example in trainer.examples:
            trainer.loss([example])
            subject = next(iter(example.passage.title_only_rows))
            if subject in example.candidates:
                assert shown[-1][kb.titles[subject]] == ""
    finally:
        builder.entity_inputs = builder_inputs


def test_the_subject_counts_as_a_title_only_gold_in_the_dropout_that_balances_golds_and_negatives(kb, mixed):
    passages = [p for d in mixed for p in d.passages if p.golds]
    subjects = [g in p.title_only_rows for p in passages for g in p.gold_rows]
    title_only = [not kb.texts[g] for p in passages for g in p.gold_rows]
    assert any(subjects) and any(title_only)
    expected = sum(s or t for s, t in zip(subjects, title_only)) / len(subjects)
    assert gold_title_only_share(kb, passages) == pytest.approx(expected)
    assert expected > sum(title_only) / len(title_only)


@pytest.mark.parametrize("q", [0.0, 0.5, 1.0])
def test_title_only_dropout_applies_to_golds_and_negatives_alike(q, kb, mixed, retriever, reader, builder,
                                                                linker_config, tmp_path):
    base = ReaderTrainer(reader, retriever, builder, kb, mixed, mixed, linker_config=linker_config,
                         config=ReaderTrainingConfig(candidates=6, candidate_kb_size=len(kb), eval_kb_size=2),
                         device=torch.device("cpu"), out=tmp_path)
    trainer = ReaderTrainer(reader, retriever, builder, kb, mixed, mixed, linker_config=linker_config,
                            config=ReaderTrainingConfig(candidates=6, candidate_kb_size=len(kb), eval_kb_size=2,
                                                        title_only_dropout=q),
                            device=torch.device("cpu"), out=tmp_path)
    assert trainer.p_gold == pytest.approx(1 - (1 - base.p_gold) * (1 - q))
    assert trainer.p_other == pytest.approx(1 - (1 - base.p_other) * (1 - q))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ReaderTrainingConfig(title_only_dropout=1.5)


def test_retriever_columns_show_the_subject_title_only_and_exclude_unlabelled_names(kb, mixed, retriever, builder,
                                                                                  linker_config):
    config = RetrieverTrainingConfig(negatives=4, hard_share=1.0, hard_kb_size=5, eval_kb_size=5,
                                     description_dropout=0.0)
    trainer = RetrieverTrainer(retriever, builder, kb, mixed, mixed, config=config, linker_config=linker_config,
                               device=torch.device("cpu"))
    trainer.p_negative = 0.0
    hello = next(i for i, p in enumerate(trainer.passages) if kb.row["Hello program"] in p.unlabelled_rows)
    messi = next(i for i, p in enumerate(trainer.passages) if kb.row["Lionel Messi"] in p.gold_rows)
    trainer.rng = random.Random(0)
    columns = trainer.columns([trainer.passages[hello], trainer.passages[messi]], [kb.row["Hello program"]])
    column = {r: i for i, r in enumerate(columns.rows)}
    assert columns.title_only[column[kb.row["Lionel Messi"]]]
    assert columns.excluded[0, column[kb.row["Hello program"]]] and not columns.excluded[1].any()
    trainer.keep_hard_negatives(torch.randn(len(trainer.passages), 4), torch.randn(len(kb), 4))
    assert all(not set(hard) & p.not_negative_rows for hard, p in zip(trainer.hard, trainer.passages))


@pytest.mark.slow  # the training command line
def test_command_line_mixes_description_passages_into_retriever_and_reader_runs(corpus_path, encoder_dir, tmp_path,
                                                                                 monkeypatch):
    monkeypatch.setenv("ENTQA_CACHE", str(tmp_path / "cache"))
    kb_path = tmp_path / "kb.jsonl.gz"
    with gzip.open(kb_path, "wt", encoding="utf-8") as f:
        for title, text in [*FIXTURE_KB, *ENTRIES]:
            f.write(json.dumps({"title": title, "text": text, "qid": None}) + "\n")
    common = ["--train", str(corpus_path), "--dev", str(corpus_path), "--kb", str(kb_path), "--batch-size", "2",
              "--max-entity-len", "24", "--eval-kb-size", "3", "--threads", "1", "--seed", "3", "--kb-passages", "4"]
    retriever_dir, reader_dir = tmp_path / "retriever", tmp_path / "reader"
    assert main(["retriever", *common, "--out", str(retriever_dir), "--encoder", str(encoder_dir), "--shared-towers",
                 "--negatives", "3", "--hard-kb-size", "3"]) == 0
    assert main(["reader", *common, "--out", str(reader_dir), "--retriever", str(retriever_dir), "--candidates", "3",
                 "--title-only-dropout", "0.3"]) == 0
    saved = json.loads((reader_dir / "reader_training_config.json").read_text())
    assert saved["kb_passages"] == 4 and saved["title_only_dropout"] == 0.3
    with pytest.raises(SystemExit):
        main(["retriever", *common, "--out", str(tmp_path / "x"), "--title-only-dropout", "0.3"])
