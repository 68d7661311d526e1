"""Tests for annotator.pipeline.linker.Linker end to end on a tiny random model and a tiny KB (CPU)."""
from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
import torch

from annotator.runtime.cancellation import Cancellation, LinkingCancelled, cancellable
from annotator.data_types import Mention
from annotator.entity_index import cached_index_dir, entity_tower_id
from annotator.errors import ModelLoadError
from annotator.pipeline.linker import Linker
from annotator.uris import NIL_NAMESPACE, dbpedia_uri, not_in_wiki_uri

from tests.conftest import TINY_CONFIG, TINY_RUNTIME
from tests.annotator.test_tokenization import TRICKY, TRICKY_WORDS
from tests.support.entity_encoding import forbid_entity_encoding
from tests.support.scripted_linker import scripted_linker

TEXT = ("SOCCER - Lyon beat Paris in Zürich 😀 while Ada Lovelace watched from São\u00a0Paulo; "
        "later\tthe team flew over Mount Everest to Berlin, Germany.")


def test_linker_describes_its_kb_and_device(tiny_linker: Linker) -> None:
    assert tiny_linker.describe()["entities"] == 12
    assert tiny_linker.describe()["device"] == "cpu float32"


@pytest.mark.parametrize("text", ["", " ", "\t\n \u200b"])
def test_empty_or_blank_text_links_nothing(tiny_linker: Linker, text: str) -> None:
    assert tiny_linker.link(text) == []
    assert tiny_linker.link(text, []) == []


@pytest.mark.parametrize("text", [TEXT, TRICKY])
def test_mentions_are_sorted_exact_and_do_not_overlap(tiny_linker: Linker, text: str) -> None:
    mentions = tiny_linker.link(text)
    assert mentions, "γ = 0 keeps every span that beats [CLS]; a random reader finds some"
    assert mentions == sorted(mentions, key=lambda m: (m.start, m.end))
    for mention in mentions:
        assert text[mention.start:mention.end] == mention.surface
        assert mention.surface == mention.surface.strip()
        assert mention.title in tiny_linker.index.titles
        assert mention.uri == dbpedia_uri(mention.title)
        assert 0.0 < mention.score <= 1.0
    assert all(a.end <= b.start for a, b in zip(mentions, mentions[1:]))


def test_d2kb_returns_one_entity_per_given_span(tiny_linker: Linker) -> None:
    spans = [(TEXT.index(w), TEXT.index(w) + len(w)) for w in ("Lyon", "Paris", "Zürich", "😀", "São\u00a0Paulo",
                                                                 "Mount Everest", "Germany")]
    spans.append((0, len(TEXT)))  # longer than any passage
    spans.append((TEXT.index("\t"), TEXT.index("\t") + 1))  # covers no wordpiece
    mentions = tiny_linker.link(TEXT, spans)
    assert [(m.start, m.end) for m in mentions] == sorted(spans)
    assert all(m.title in tiny_linker.index.titles and m.score >= 0 for m in mentions)
    assert [m.surface for m in mentions if m.surface in TRICKY_WORDS] == ["Zürich", "😀"]


def test_given_spans_not_above_gamma_are_nil(tiny_checkpoint: Path, tiny_kb: Path, tiny_linker: Linker) -> None:
    spans = [(TEXT.index(w), TEXT.index(w) + len(w)) for w in ("Lyon", "Paris", "Zürich", "Mount Everest", "Germany")]
    linked = tiny_linker.link(TEXT, spans)
    gamma = sorted(m.score for m in linked)[len(linked) // 2]
    strict = Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu",
                                    config_overrides={"threshold": gamma}, runtime=TINY_RUNTIME)
    answered = strict.link(TEXT, spans)
    assert [(m.start, m.end, m.score) for m in answered] == [(m.start, m.end, m.score) for m in linked]
    nil = [m for m in answered if m.score <= gamma]
    assert nil and len(nil) < len(answered)
    for mention, first in zip(answered, linked):
        if mention.score <= gamma:
            assert mention.title is None and mention.uri == not_in_wiki_uri(NIL_NAMESPACE, mention.surface)
        else:
            assert mention == first


def test_given_span_outside_the_text_is_rejected(tiny_linker: Linker) -> None:
    with pytest.raises(ValueError, match="outside"):
        tiny_linker.link("Paris", [(3, 9)])


def test_link_batch_equals_link(tiny_linker: Linker) -> None:
    texts = [TEXT, "", TRICKY, "Paris"]
    batched, single = tiny_linker.link_batch(texts), [tiny_linker.link(t) for t in texts]
    # Padding to other lengths in shared batches moves scores in the last float digits only.
    assert [[(m.start, m.end, m.title) for m in ms] for ms in batched] == \
        [[(m.start, m.end, m.title) for m in ms] for ms in single]
    assert [m.score for ms in batched for m in ms] == pytest.approx([m.score for ms in single for m in ms])


def test_link_batch_takes_each_documents_own_spans(tiny_linker: Linker) -> None:
    spans = [(TEXT.index(w), TEXT.index(w) + len(w)) for w in ("Lyon", "Zürich", "Germany")]
    texts, given = [TEXT, TRICKY, "Paris", TEXT], [spans, None, [(0, 5)], None]
    batched = tiny_linker.link_batch(texts, given)
    single = [tiny_linker.link(text, spans) for text, spans in zip(texts, given)]
    assert [[(m.start, m.end, m.title) for m in ms] for ms in batched] == \
        [[(m.start, m.end, m.title) for m in ms] for ms in single]
    assert [m.score for ms in batched for m in ms] == pytest.approx([m.score for ms in single for m in ms])
    assert [(m.start, m.end) for m in batched[0]] == spans
    with pytest.raises(ValueError, match="spans has 1 entries for 2 texts: give one per text, or None"):
        tiny_linker.link_batch([TEXT, "Paris"], [None])
    with pytest.raises(ValueError, match="outside"):
        tiny_linker.link_batch([TEXT, "Paris"], [None, [(3, 9)]])


def test_a_cancelled_document_stops_before_the_next_batch(tiny_linker: Linker) -> None:
    with cancellable(Cancellation(deadline=0)), pytest.raises(LinkingCancelled, match="deadline passed"):
        tiny_linker.link(TEXT)
    with cancellable(Cancellation.after(60)):
        assert tiny_linker.link(TEXT) == tiny_linker.link(TEXT)


def test_requests_never_tokenize_entities(tiny_linker: Linker, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("entity text tokenized during a request")

    monkeypatch.setattr(tiny_linker.builder, "entity_inputs", forbidden)
    assert isinstance(tiny_linker.link(TEXT)[0], Mention)


def test_cached_index_is_reused_and_overrides_change_the_config(tiny_checkpoint: Path, tiny_kb: Path,
                                                                 tiny_linker: Linker,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    forbid_entity_encoding(monkeypatch)
    linker = Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu", config_overrides={"top_k": 2})
    assert linker.config.top_k == 2 and linker.index.directory == tiny_linker.index.directory


def test_explicit_index_dir_and_no_settings_from_the_environment(tiny_checkpoint: Path, tiny_kb: Path,
                                                                 tiny_linker: Linker,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    linker = Linker.from_pretrained(tiny_checkpoint, index_dir=tiny_linker.index.directory, device="cpu")
    assert linker.index.titles == tiny_linker.index.titles
    # The library takes arguments; the web app and the command lines read ENTQA_* (annotator.settings).
    monkeypatch.setenv("ENTQA_TOP_K", "2")
    monkeypatch.setenv("ENTQA_KB_PATH", str(tiny_kb))
    with pytest.raises(ModelLoadError, match="no KB: pass kb_path"):
        Linker.from_pretrained(tiny_checkpoint, device="cpu")
    assert Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu").config.top_k == TINY_CONFIG.top_k


def test_a_relative_path_to_the_demo_kb_serves_the_shipped_index(tiny_checkpoint: Path, tiny_kb: Path,
                                                                   tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # The README's ENTQA_KB_PATH=models/entqa-minilm/kb/entities.jsonl.gz, read from the checkout's root.
    from annotator.entity_index.__main__ import build_index

    model_dir = tmp_path / "models" / "tiny"
    shutil.copytree(tiny_checkpoint, model_dir)
    (model_dir / "kb").mkdir()
    with gzip.open(model_dir / "kb" / "entities.jsonl.gz", "wb") as kb:
        kb.write(tiny_kb.read_bytes())
    shipped = build_index(model_dir, model_dir / "kb" / "entities.jsonl.gz", out=model_dir / "index").directory
    forbid_entity_encoding(monkeypatch)
    monkeypatch.chdir(tmp_path)
    relative = "models/tiny/kb/entities.jsonl.gz"
    assert Linker.from_pretrained(model_dir, kb_path=relative, device="cpu").index.directory == shipped
    assert Linker.from_pretrained("models/tiny", kb_path=relative, device="cpu").index.directory.resolve() == shipped


def test_a_gpu_dtype_cast_keeps_the_index_identity_of_the_stored_weights(
        tiny_checkpoint: Path, tiny_kb: Path, tiny_linker: Linker, monkeypatch: pytest.MonkeyPatch) -> None:
    # On CUDA the towers run in bf16; the index (built on the CPU here, or shipped) must still be found.
    from annotator.entity_index.__main__ import build_index
    import annotator.entity_index.__main__
    import annotator.pipeline.loading

    bf16 = lambda device=None: (torch.device("cpu"), torch.bfloat16)  # noqa: E731 - what CUDA returns
    monkeypatch.setattr(annotator.pipeline.loading, "inference_device", bf16)
    monkeypatch.setattr(annotator.entity_index.__main__, "inference_device", bf16)
    monkeypatch.setattr(annotator.pipeline.loading, "cpu_reader", lambda reader, builder, config: reader)
    monkeypatch.setattr(annotator.pipeline.loading, "kb_encoder", lambda retriever, builder, config: retriever)
    linker = Linker.from_pretrained(tiny_checkpoint, index_dir=tiny_linker.index.directory)
    assert next(linker.retrieval.retriever.parameters()).dtype == torch.bfloat16
    assert linker.index.directory == tiny_linker.index.directory
    assert build_index(tiny_checkpoint, tiny_kb).directory == tiny_linker.index.directory


def test_the_index_command_builds_where_the_linker_looks(tiny_checkpoint: Path, tiny_kb: Path, entqa_cache: Path,
                                                         tiny_linker: Linker) -> None:
    from annotator.entity_index.__main__ import build_index

    index = build_index(tiny_checkpoint, tiny_kb)  # finds the index tiny_linker built (precision is not identity)
    linker = Linker.from_pretrained(tiny_checkpoint, kb_path=tiny_kb, device="cpu")
    assert index.directory == linker.index.directory == tiny_linker.index.directory
    assert index.directory == cached_index_dir(kb_path=tiny_kb, config=linker.config,
                                               entity_tower_id=entity_tower_id(linker.retrieval.retriever))
    assert index.directory.parent == entqa_cache / "indexes"
    with pytest.raises(ValueError, match="explicit output folder"):
        build_index(tiny_checkpoint, tiny_kb, limit=3)


def test_a_mention_is_never_part_of_a_word(tiny_linker: Linker) -> None:
    # "Berliners" is "berlin", "##ers": the scripted reader marks the wordpiece "berlin", which ends mid-word.
    scripted = scripted_linker(tiny_linker, threshold=0.05)
    assert [(m.surface, m.title) for m in scripted.link("Berlin fans cheered.")] == [("Berlin", "Berlin")]
    assert scripted.link("Berliners cheered.") == []
