"""The EntQA linker: an orchestrator over the stages it is given (the text's view, retrieval, one reading of every
(passage, candidate) pair, decoding, the post-processors), run over one `Document` per text."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from annotator.data_types import Mention
from annotator.entity_index import EntityIndex
from annotator.kb.descriptions import EntityDescriptions
from annotator.linking import Span, check_spans
from annotator.model.config import LinkerConfig
from annotator.model.tokenization import InputBuilder
from annotator.pipeline.document import Document
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.merging import LinkedSpan
from annotator.pipeline.stages import PostProcessor, Reading, Retrieval, TextViewer
from annotator.pipeline.text_view import TextView
from annotator.runtime.settings import RuntimeSettings
from annotator.runtime.stage_times import timed
from annotator.uris import NIL_NAMESPACE, dbpedia_uri, not_in_wiki_uri

if TYPE_CHECKING:
    from annotator.pipeline.loading import LoadedKB, LoadedModels


@dataclass(frozen=True, eq=False, kw_only=True)
class Linker:
    """EntQA end to end: `link(text)` (A2KB) or `link(text, spans)` (D2KB) → mentions sorted by start.

    `from_pretrained` builds the shipped stages; a test or benchmark passes its own (`dataclasses.replace` swaps
    one).
    """

    text_view: TextViewer  # text → the view the models read (#hashtags and @handles as words)
    builder: InputBuilder  # the view → wordpieces, passages and model inputs
    retrieval: Retrieval
    reading: Reading
    decoding: DocumentDecoding
    post_processors: Sequence[PostProcessor]  # run in order after decoding
    index: EntityIndex  # the KB's titles by row, and what `describe` names
    descriptions: EntityDescriptions  # by index row, for Mention.description
    config: LinkerConfig  # the settings the stages were built from (changing it changes no stage)
    device: torch.device
    model_dir: Path
    kb_path: Path | None
    kb_changes: str = ""  # the digest of the KB's changes in use (`annotator.kb.changes`), "" for none
    sources: tuple[LoadedModels, LoadedKB] | None = None  # what `reloaded` reuses

    @classmethod
    def from_pretrained(cls, model_dir: str | Path, *, kb_path: str | Path | None = None,
                        index_dir: str | Path | None = None, device: str | torch.device | None = None,
                        config_overrides: Mapping[str, Any] | None = None,
                        runtime: RuntimeSettings | None = None) -> Linker:
        """Load a checkpoint folder and the entity index of a KB, and build the shipped stages over them.

        The model's settings are the checkpoint's config.json with `config_overrides`; the host's are `runtime`
        (default `RuntimeSettings()`; the environment is the caller's to read, see `annotator.settings`). The KB
        is `kb_path`, else the demo KB inside the model folder (`kb/entities.jsonl.gz`, with its prebuilt
        `index/`). Its index is read from `index_dir` when given, else from the model folder (demo KB) or the
        cache, where it is built once (resuming an interrupted build).

        Raises:
            ModelLoadError: missing checkpoint files, no KB, or an index built for something else.
        """
        from annotator.pipeline.loading import load_linker  # loading imports this module

        return load_linker(model_dir, kb_path=kb_path, index_dir=index_dir, device=device,
                           config_overrides=config_overrides, runtime=runtime)

    def reloaded(self) -> Linker:
        """A linker with the same models over the KB as it is on disk now: its changes (`entqa kb`) applied, its
        index loaded again only when its file was replaced (`entqa kb compact`). This linker is left as it is.

        Raises:
            ModelLoadError, KBChangeError, KBFormatError: the KB on disk cannot be loaded.
        """
        from annotator.pipeline.loading import reload_linker  # loading imports this module

        return reload_linker(self)

    def describe(self) -> dict[str, str | int | float]:
        """Model, encoder, KB and its entity count, index, mention table, device and γ in use (for /health)."""
        return {"model": str(self.model_dir), "encoder": self.config.encoder,
                "kb": str(self.kb_path or self.index.directory), "kb_changes": self.kb_changes,
                **self.retrieval.describe(),
                **self.reading.describe(), "threshold": self.decoding.threshold}

    def link(self, text: str, spans: Sequence[Span] | None = None) -> list[Mention]:
        """Mentions in `text`: found end to end, or one per given `(start, end)` span (D2KB).

        Raises:
            ValueError: a given span is empty or outside the text.
        """
        return self.link_batch([text], [spans])[0]

    def link_batch(self, texts: Sequence[str],
                   spans: Sequence[Sequence[Span] | None] | None = None) -> list[list[Mention]]:
        """`link` for several documents, sharing the retrieval call and the reader batches.

        Args:
            texts: the documents.
            spans: each document's given spans (D2KB) or None (A2KB), one entry per text; None: all A2KB.

        Raises:
            ValueError: `spans` does not have one entry per text, or a given span is empty or outside its text.
        """
        if spans is None:
            spans = [None] * len(texts)
        elif len(spans) != len(texts):
            raise ValueError(f"spans has {len(spans)} entries for {len(texts)} texts: give one per text, or None")
        views, documents = self.read(texts, spans)
        return [self.mentions(text, view, document) for text, view, document in zip(texts, views, documents)]

    def read(self, texts: Sequence[str], spans: Sequence[Sequence[Span] | None]
             ) -> tuple[list[TextView], list[Document]]:
        """Each text's view and its `Document` after every stage: its passages' scores and its links, in the view's
        offsets (what `link_batch` turns into mentions; what the learned decision is trained on).

        Raises:
            ValueError: a given span is empty or outside its text.
        """
        for text, given in zip(texts, spans):
            check_spans(text, given)
        views = [self.text_view.view(text) for text in texts]
        documents = [Document.tokenized(view.text, view.to_view(given), self.builder)
                     for view, given in zip(views, spans)]
        if any(document.passages for document in documents):
            self._run_stages(documents)
        return views, documents

    def _run_stages(self, documents: Sequence[Document]) -> None:
        with timed("retrieval"):
            candidates = self.retrieval.candidates(documents)
        with timed("reading"):
            scores = self.reading.scores(documents, candidates)
        with timed("decoding"):
            for document, passage_scores in zip(documents, scores):
                document.scores = passage_scores
                document.links = self.decoding.links(document)
        for stage in self.post_processors:
            with timed(type(stage).__name__):
                stage.revise(documents, reading=self.reading, decoding=self.decoding)

    def mentions(self, text: str, view: TextView, document: Document) -> list[Mention]:
        """The document's links as mentions of the original text, sorted by position; given spans come back as
        given, found ones may take a whole tag (`TextView.found_to_original`)."""
        spans = [(link.start, link.end) for link in document.links]
        originals = ([view.to_original(*span) for span in spans] if document.given is not None
                     else view.found_to_original(spans))
        return sorted((self._mention(text, link, start, end) for link, (start, end) in zip(document.links, originals)),
                      key=lambda m: (m.start, m.end))

    def _mention(self, text: str, span: LinkedSpan, start: int, end: int) -> Mention:
        surface = text[start:end]
        if not span.is_linked(self.decoding.threshold):
            return Mention(start, end, surface, None, not_in_wiki_uri(NIL_NAMESPACE, surface), span.score)
        title = self.index.titles[span.entity]
        return Mention(start, end, surface, title, dbpedia_uri(title), span.score, self.descriptions[span.entity])
