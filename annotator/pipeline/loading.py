"""Loading a linker: a checkpoint folder, its settings, the KB, and the KB's entity index (shipped, given, or built
once into the cache), each resolved here so that linking itself takes only objects."""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from annotator.errors import ModelLoadError
from annotator.entity_index import EntityEncoder, EntityIndex, cached_index_dir, entity_tower_id, index_identity
from annotator.entity_index.build import build_folder
from annotator.entity_index.folder import faiss_path, read_manifest
from annotator.entity_index.segment import SegmentedIndex, cached_segment
from annotator.decision.model import Decision, reader_identity
from annotator.decision.stage import LearnedDecision
from annotator.kb.changes import read_changes
from annotator.kb.descriptions import EntityDescriptions
from annotator.kb.reading import kb_fingerprint
from annotator.knowledge import Knowledge
from annotator.knowledge.loading import load_knowledge
from annotator.kb.given_names import given_names
from annotator.model.checkpoint import (MENTION_TABLE, load_checkpoint_tokenizer, load_config, load_reader,
                                        load_retriever)
from annotator.model.config import LinkerConfig
from annotator.model.reader import span_positions_only
from annotator.model.retriever import DualEncoder
from annotator.model.tokenization import InputBuilder
from annotator.pipeline.candidate_retrieval import CandidateRetrieval
from annotator.pipeline.document_candidates import DocumentCandidates
from annotator.pipeline.document_decoding import DocumentDecoding
from annotator.pipeline.enclosing_names import EnclosingNames
from annotator.pipeline.full_titles import FullTitles
from annotator.pipeline.linker import Linker
from annotator.pipeline.mention_table import MentionTable, NameCandidates
from annotator.pipeline.name_test import NameTest
from annotator.pipeline.national_teams import NationalTeams
from annotator.pipeline.reading import BatchedReading, CutEntities
from annotator.pipeline.short_names import OtherBearers, ShortNames
from annotator.pipeline.spelling_variants import SpellingVariants
from annotator.pipeline.stages import PostProcessor
from annotator.pipeline.text_view import TagReader
from annotator.pipeline.title_answers import TitleAnswers
from annotator.pipeline.title_matches import TitleMatches
from annotator.pipeline.title_only_look import TitleOnlyEntities, TitleOnlyLook
from annotator.pipeline.web_addresses import WebAddresses
from annotator.pipeline.written_initials import WrittenInitials
from annotator.runtime.memory import release_freed_memory
from annotator.runtime.precision import cpu_reader, inference_device, kb_encoder
from annotator.runtime.settings import RuntimeSettings

logger = logging.getLogger(__name__)

EMBEDDED_KB = Path("kb") / "entities.jsonl.gz"
EMBEDDED_INDEX = Path("index")


@dataclass(frozen=True, eq=False)
class LoadedModels:
    """A checkpoint's models, loaded once and kept by the linker so that a reload of its KB reuses them."""

    model_dir: Path
    config: LinkerConfig
    runtime: RuntimeSettings
    builder: InputBuilder
    retriever: DualEncoder  # on the device
    reader: Any  # the reader as `cpu_reader` returns it (a module or its int8 export)
    device: torch.device
    checkpoint_id: str  # of the stored entity tower: what a KB's index depends on

    def kb_encoder(self) -> EntityEncoder:
        return kb_encoder(self.retriever, self.builder, self.runtime.cpu_precision)


@dataclass(frozen=True, eq=False)
class LoadedKB:
    """A KB file's index and descriptions, as its file was indexed (its changes are applied over them)."""

    path: Path | None
    fingerprint: str | None
    index: EntityIndex
    descriptions: EntityDescriptions
    index_dir: Path | None  # named by the caller, rather than found


def load_linker(model_dir: str | Path, *, kb_path: str | Path | None = None, index_dir: str | Path | None = None,
                device: str | torch.device | None = None, config_overrides: Mapping[str, Any] | None = None,
                runtime: RuntimeSettings | None = None) -> Linker:
    """`Linker.from_pretrained` (see there): the checkpoint, KB and index loaded, then the stages built over them."""
    model_dir = Path(model_dir)
    models = load_models(model_dir, device=device, config_overrides=config_overrides, runtime=runtime)
    kb = _resolve_kb(model_dir, kb_path, required=index_dir is None)
    return build_linker(models, load_kb(models, kb, index_dir=Path(index_dir) if index_dir is not None else None))


def reload_linker(linker: Linker) -> Linker:
    """`Linker.reloaded` (see there)."""
    if linker.sources is None:
        raise ModelLoadError("this linker was not loaded from a checkpoint, so it cannot reload its KB")
    models, kb = linker.sources
    if kb.path is not None and kb_fingerprint(kb.path) != kb.fingerprint:  # compacted, or replaced
        kb = load_kb(models, kb.path, index_dir=kb.index_dir)
    return build_linker(models, kb)


def load_models(model_dir: Path, *, device: str | torch.device | None = None,
                config_overrides: Mapping[str, Any] | None = None, runtime: RuntimeSettings | None = None,
                with_reader: bool = True) -> LoadedModels:
    """The checkpoint's retriever and (unless not `with_reader`) reader on `device`, with its config and tokenizer."""
    config = load_config(model_dir).replace(**dict(config_overrides or {}))
    runtime = runtime or RuntimeSettings()
    device, dtype = inference_device(device)
    builder = InputBuilder(load_checkpoint_tokenizer(model_dir), config)
    retriever = load_retriever(model_dir, config)
    checkpoint_id = entity_tower_id(retriever)  # of the stored weights: the GPU's bf16 copy hashes otherwise
    retriever = retriever.to(device, dtype)
    reader = (cpu_reader(span_positions_only(load_reader(model_dir), config.passage_len - 1).to(device, dtype),
                         builder, runtime.cpu_precision) if with_reader else None)
    # The int8 export leaves its traced copy and graphs in reference cycles and freed heap pages: 0.7 GB that
    # would stay through the KB's load, where a worker's memory peaks.
    release_freed_memory()
    return LoadedModels(model_dir, config, runtime, builder, retriever, reader, device, checkpoint_id)


def index_folder(models: LoadedModels, kb: Path | None, *, index_dir: Path | None = None) -> Path:
    """The folder of the KB file's index: `index_dir`, else the model folder's own (the demo KB, or a copy of it),
    else the cache's, built there once (an interrupted build resumes)."""
    if index_dir is not None:
        return index_dir
    assert kb is not None  # `_resolve_kb` requires one without an index folder
    identity = index_identity(kb_path=kb, checkpoint_id=models.checkpoint_id, config=models.config)
    shipped = models.model_dir / EMBEDDED_INDEX
    if read_manifest(shipped).get("identity") == identity:
        return shipped
    directory = cached_index_dir(kb_path=kb, entity_tower_id=models.checkpoint_id, config=models.config)
    index_type = models.runtime.index_type
    if not (read_manifest(directory).get("complete")
            and (index_type == "flat" or faiss_path(directory, index_type).is_file())):
        logger.info("entity index for %s: %s (built once, then reused)", kb, directory)
        build_folder(directory, kb_path=kb, encoder=models.kb_encoder(), builder=models.builder,
                     checkpoint_id=models.checkpoint_id, index_type=index_type,
                     batch_size=models.runtime.batch_sizes(models.device.type)[1], limit=None)
    return directory


def load_kb(models: LoadedModels, kb: Path | None, *, index_dir: Path | None = None) -> LoadedKB:
    """The KB file's index (see `index_folder`) and its descriptions."""
    identity = index_identity(kb_path=kb, checkpoint_id=models.checkpoint_id, config=models.config)
    index = EntityIndex.load(index_folder(models, kb, index_dir=index_dir), identity=identity,
                             index_type=models.runtime.index_type)
    descriptions = EntityDescriptions.from_kb(kb) if kb is not None else EntityDescriptions.none()
    release_freed_memory()  # the KB's parsed lines, before the stages over its titles are built
    return LoadedKB(kb, kb_fingerprint(kb) if kb is not None else None, index, descriptions, index_dir)


def build_linker(models: LoadedModels, kb: LoadedKB) -> Linker:
    """The linker's stages, as `models.config` picks and tunes them, over the loaded models and KB with the KB's
    changes as they are on disk now: what `load_linker` and `reload_linker` end with. The models and the KB's
    index are used as given; the KB's changes, and the files of the stages the config turns on (the mention
    table, the learned decision), are read here."""
    config, builder, device = models.config, models.builder, models.device
    changes = read_changes(kb.path) if kb.path is not None else None
    index, descriptions = kb.index, kb.descriptions
    if changes:
        segment = cached_segment(kb.index.manifest["identity"], changes, encoder=models.kb_encoder, builder=builder,
                                 dim=kb.index.dim)
        index, descriptions = SegmentedIndex(kb.index, segment, changes), descriptions.appended(
            entity.text for entity in changes.entities)
        logger.info("KB changes of %s: %d entities added or updated, %d hidden", kb.path, len(segment),
                    len(changes.hidden))
    reader_batch_size, retriever_batch_size = models.runtime.batch_sizes(device.type)
    # read once for the name test's priors and the learned decision
    knowledge = (_knowledge(models.model_dir, kb.path, index)
                 if kb.path is not None and (config.name_test or config.decision) else None)
    name_test = (NameTest(index.titles, knowledge.priors if knowledge else None, config.name_test_stand_in)
                 if config.name_test else None)
    read_index = CutEntities(index, config.read_entity_len, builder.sep_id) if config.read_entity_len else index
    reading = BatchedReading(builder=builder, reader=models.reader, index=read_index, device=device,
                             batch_size=reader_batch_size, name_test=name_test)
    described = descriptions.described()
    # the KB's titles by text, built once: the given spans' extra candidates, their title answers, enclosing names
    title_matches = (TitleMatches.from_titles(index.titles, described, config.title_candidates)
                     if config.title_candidates or config.title_answers or config.enclosing_names else None)
    post_processors: list[PostProcessor] = []
    if config.document_candidates:
        post_processors.append(DocumentCandidates(index.titles))
    if config.short_names:
        post_processors.append(ShortNames(index.titles))
    if config.title_only_look:
        title_only = TitleOnlyEntities(index, builder.title_marker_id, builder.sep_id)
        post_processors.append(TitleOnlyLook(dataclasses.replace(reading, index=title_only)))
    if config.decision:  # after every reading, before the rules that move spans
        post_processors.append(LearnedDecision(Decision.load(models.model_dir,
                                                              reader_id=reader_identity(models.model_dir)),
                                               index.titles, described, _every_row(knowledge, index),
                                               config))
    if config.written_initials:
        post_processors.append(WrittenInitials(index.titles, described))
    if config.full_titles:
        post_processors.append(FullTitles(index.titles))
    if config.enclosing_names:
        post_processors.append(EnclosingNames(title_matches))
    if config.national_teams:
        post_processors.append(NationalTeams.from_titles(index.titles))
    if config.short_names:  # last of the name stages: it follows the full names' final entities
        post_processors.append(OtherBearers(index.titles, described, given_names(index.titles, descriptions)))
    if config.title_answers:
        post_processors.append(TitleAnswers(title_matches))
    if config.spelling_variants:  # after every stage that picks an entity
        post_processors.append(SpellingVariants.from_titles(index.titles, described))
    post_processors.append(WebAddresses())  # last: the stages before add links too
    linker = Linker(text_view=TagReader(index.titles, builder.tokenizer.get_vocab()), builder=builder,
                  retrieval=CandidateRetrieval(builder=builder, retriever=models.retriever, index=index,
                                               device=device, top_k=config.top_k, batch_size=retriever_batch_size,
                                               names=_name_candidates(models.model_dir, config, index),
                                               titles=title_matches if config.title_candidates else None),
                  reading=reading,
                  decoding=DocumentDecoding(top_spans=config.top_spans, max_span_len=config.max_span_len,
                                            threshold=config.threshold),
                  post_processors=post_processors, index=index,
                  descriptions=descriptions,
                  config=config, device=device, model_dir=models.model_dir, kb_path=kb.path,
                  kb_changes=changes.digest if changes else "", sources=(models, kb))
    release_freed_memory()  # the temporaries of the stages built over a million titles
    return linker


def _knowledge(model_dir: Path, kb: Path, index: EntityIndex) -> Knowledge:
    """The KB file's knowledge tables (shipped, cached or built once): a row for each of the file's entries; entities
    added since (`entqa kb add`) come after them in the index, and the name test passes those on their titles."""
    knowledge, directory = load_knowledge(model_dir, kb)
    if len(knowledge) > len(index):
        raise ModelLoadError(f"the knowledge tables in {directory} hold {len(knowledge)} entities, the index only "
                             f"{len(index)}")
    return knowledge


def _every_row(knowledge: Knowledge | None, index: EntityIndex) -> Knowledge:
    """`knowledge` where it covers every row of the index, as the learned decision's features need."""
    if knowledge is None:
        raise ModelLoadError("the learned decision needs the KB file (its knowledge tables are built from it)")
    if len(knowledge) != len(index):
        raise ModelLoadError(f"the knowledge tables hold {len(knowledge)} entities, the index {len(index)} (entities "
                             f"added since the KB file: compact it with entqa kb compact)")
    return knowledge


def _name_candidates(model_dir: Path, config: LinkerConfig, index: EntityIndex) -> NameCandidates | None:
    """The checkpoint's mention table over the KB, when `config.mention_candidates` asks for it."""
    if not config.mention_candidates:
        return None
    path = model_dir / MENTION_TABLE
    if not path.is_file():
        raise ModelLoadError(f"mention_candidates is {config.mention_candidates} but {path} does not exist "
                             f"(build it with python -m annotator.cli.mention_table, or set it to 0)")
    try:
        table = MentionTable.load(path)
    except ValueError as exc:
        raise ModelLoadError(str(exc)) from exc
    return table.rows(index.titles, config.mention_candidates)


def _resolve_kb(model_dir: Path, kb_path: str | Path | None, *, required: bool) -> Path | None:
    """`kb_path`, else (unless not `required`) the model folder's demo KB."""
    if kb_path:
        path = Path(kb_path)
        if not path.is_file():
            raise ModelLoadError(f"KB file {path} does not exist")
        return path
    if not required:  # an index folder without a named KB is checked against the model side only
        return None
    embedded = model_dir / EMBEDDED_KB
    if not embedded.is_file():
        raise ModelLoadError(f"no KB: pass kb_path or ship {embedded}")
    return embedded
