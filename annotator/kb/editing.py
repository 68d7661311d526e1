"""Changing a KB with a checkpoint's entity tower: each change recorded beside the KB file (`annotator.kb.changes`)
with its entities encoded into the cached segment the linker searches (`annotator.entity_index.segment`), and
`compact`, which writes the changes into a new KB file and its index without encoding anything again."""
from __future__ import annotations

import gzip
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from annotator.data_types import Entity
from annotator.entity_index.folder import cached_index_dir, index_identity, read_manifest, stored_titles
from annotator.entity_index.segment import DeltaSegment, cached_segment, compact_folder
from annotator.kb.changes import (KBChangeError, KBChanges, KBEntries, added, changes_path, kb_lock, read_changes,
                                  removed, sync_folder, updated, write_changes)
from annotator.kb.reading import kb_fingerprint, read_kb
from annotator.pipeline.loading import LoadedModels, index_folder, load_models
from annotator.runtime.settings import RuntimeSettings

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class KBEditor:
    """A KB file opened for changes: its index folder's entries and identity, and the checkpoint's entity tower."""

    kb_path: Path
    models: LoadedModels
    base_dir: Path  # the index folder of the KB file as it is
    base_identity: dict[str, Any]
    entries: KBEntries

    @classmethod
    def open(cls, model_dir: str | Path, kb_path: str | Path, *, index_dir: str | Path | None = None,
             runtime: RuntimeSettings | None = None, device: str | None = None) -> KBEditor:
        """The KB file at `kb_path` with the checkpoint in `model_dir`; its index is found (or built) as the linker
        finds it, in `index_dir` when given."""
        kb_path = Path(kb_path)
        models = load_models(Path(model_dir), device=device, runtime=runtime, with_reader=False)
        base_dir = index_folder(models, kb_path, index_dir=Path(index_dir) if index_dir is not None else None)
        identity = index_identity(kb_path=kb_path, checkpoint_id=models.checkpoint_id, config=models.config)
        manifest = read_manifest(base_dir)
        if manifest.get("identity") != identity:
            raise KBChangeError(f"the index in {base_dir} was not built for {kb_path} with this checkpoint")
        return cls(kb_path, models, base_dir, identity, KBEntries(*stored_titles(base_dir)))

    def add(self, entities: Sequence[Entity]) -> KBChanges:
        """Add entities the KB lacks (see `annotator.kb.changes.added`); returns the changes now recorded."""
        return self._change(lambda changes: added(changes, self.entries, entities))

    def update(self, entities: Sequence[Entity]) -> KBChanges:
        """Give entities of the KB new descriptions (see `annotator.kb.changes.updated`)."""
        return self._change(lambda changes: updated(changes, self.entries, entities))

    def remove(self, keys: Sequence[str]) -> KBChanges:
        """Remove entities named by title or QID (see `annotator.kb.changes.removed`)."""
        return self._change(lambda changes: removed(changes, self.entries, keys))

    def segment(self, changes: KBChanges, previous: KBChanges | None = None) -> DeltaSegment:
        """The cached segment of `changes`, encoded now where it is not (reusing `previous`'s rows)."""
        return cached_segment(self.base_identity, changes, encoder=self.models.kb_encoder, builder=self.models.builder,
                              dim=self.models.retriever.dim, previous=previous,
                              batch_size=self.models.runtime.batch_sizes(self.models.device.type)[1])

    def compact(self) -> Path:
        """Write the KB file with its changes in (the entries not removed, in their order, then the changed
        entities, as `{"title", "text", "qid"}` lines) and its index folder in the cache, from the vectors
        already encoded; the changes file goes. Returns the new index folder.

        The file's new version is named in the changes file before it is renamed over the old one, so an
        interruption at any point leaves the KB as it was or as compacted.

        Raises:
            KBChangeError: there are no changes, or the index covers only part of the KB file.
        """
        with kb_lock(self.kb_path):
            changes = read_changes(self.kb_path)
            if not changes:
                raise KBChangeError(f"{self.kb_path} has no changes to compact")
            if self.base_identity.get("kb_limit") is not None:
                raise KBChangeError(f"the index in {self.base_dir} holds only part of {self.kb_path}")
            segment = self.segment(changes)
            partial = self.kb_path.with_name(self.kb_path.name + ".compacted.partial")
            try:
                _write_kb(partial, _compacted_entities(self.kb_path, changes), gzipped=self.kb_path.suffix == ".gz")
                identity = index_identity(kb_path=partial, checkpoint_id=self.models.checkpoint_id,
                                          config=self.models.config)
                directory = cached_index_dir(kb_path=partial, entity_tower_id=self.models.checkpoint_id,
                                             config=self.models.config)
                compact_folder(directory, base_dir=self.base_dir, segment=segment, changes=changes, identity=identity)
                write_changes(self.kb_path, replace(changes, compacted_into=kb_fingerprint(partial)))
                os.replace(partial, self.kb_path)
            finally:
                partial.unlink(missing_ok=True)
            sync_folder(self.kb_path.parent)
            changes_path(self.kb_path).unlink()
            return directory

    def _change(self, change: Callable[[KBChanges], KBChanges]) -> KBChanges:
        with kb_lock(self.kb_path):
            before = read_changes(self.kb_path)
            after = change(before)
            self.segment(after, previous=before)  # encoded before the change is recorded: never a change without
            write_changes(self.kb_path, after)
            return after


def _compacted_entities(kb_path: Path, changes: KBChanges) -> Iterator[Entity]:
    yield from (entity for entity in read_kb(kb_path) if entity.title not in changes.hidden)
    yield from changes.entities


def _write_kb(path: Path, entities: Iterator[Entity], *, gzipped: bool) -> None:
    """Write entities as shared-format JSON lines, synced to disk."""
    with open(path, "wb") as raw:
        handle: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) if gzipped else raw
        for entity in entities:
            handle.write((json.dumps({"title": entity.title, "text": entity.text, "qid": entity.qid},
                                     ensure_ascii=False) + "\n").encode())
        if gzipped:
            handle.close()
        raw.flush()
        os.fsync(raw.fileno())
