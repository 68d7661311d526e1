"""The mention table's command line: the table counted from a NIF corpus's links, with the KB's titles."""
from __future__ import annotations

from pathlib import Path

from annotator.pipeline.mention_table import MentionTable
from annotator.cli.mention_table import main
from nif.data_types import NifAnnotation, NifDocument
from nif.write import write_document

TINY_KB = Path(__file__).resolve().parents[1] / "resources" / "annotator" / "kb_shared.jsonl"


def test_the_command_builds_the_table_from_a_corpus_with_kb_titles(tmp_path: Path) -> None:
    text = "Lovelace met Lovelace in Paris; Ada from Zurich."
    spans = [("Lovelace", "Ada_Lovelace"), ("Paris", "Paris"), ("Ada", "http://aida/notInWiki/Ada")]
    annotations = [NifAnnotation(text.index(s), text.index(s) + len(s),
                                 (uri if uri.startswith("http") else f"http://dbpedia.org/resource/{uri}",))
                   for s, uri in spans]
    annotations.append(NifAnnotation(text.rindex("Lovelace"), text.rindex("Lovelace") + 8,
                                     ("http://dbpedia.org/resource/Ada_Lovelace",)))
    annotations.append(NifAnnotation(text.index("Zurich"), text.index("Zurich") + 6,
                                     ("http://dbpedia.org/resource/Z%C3%BCrich",)))
    corpus = tmp_path / "train.ttl"
    corpus.write_text(write_document(NifDocument(f"http://example.org/d#char=0,{len(text)}", text,
                                                 tuple(annotations))), encoding="utf-8")
    main(["--train", str(corpus), "--kb", str(TINY_KB), "--out", str(tmp_path / "mentions.tsv")])
    assert MentionTable.load(tmp_path / "mentions.tsv").entities == {
        "Lovelace": (("Ada Lovelace", 2),), "Paris": (("Paris", 1),), "Zurich": (("Zürich", 1),)}


def test_a_fold_left_out_is_not_counted(tmp_path: Path) -> None:
    texts = {"Paris in spring.": "Paris", "Lovelace in autumn.": "Ada_Lovelace"}
    corpus = tmp_path / "train.ttl"
    corpus.write_text("".join(
        write_document(NifDocument(f"http://example.org/d{i}#char=0,{len(text)}", text, (
            NifAnnotation(0, text.index(" "), (f"http://dbpedia.org/resource/{title}",)),)))
        for i, (text, title) in enumerate(texts.items())), encoding="utf-8")
    for fold, kept in [("1/2", {"Lovelace"}), ("2/2", {"Paris"})]:
        out = tmp_path / f"mentions-{fold[0]}.tsv"
        main(["--train", str(corpus), "--kb", str(TINY_KB), "--out", str(out), "--leave-out-fold", fold])
        assert set(MentionTable.load(out).entities) == kept
