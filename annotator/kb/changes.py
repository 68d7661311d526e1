"""A KB's changes since its file was indexed: entities added or given a new description, entries removed.

They are kept beside the KB file, in `<kb>.changes.json`, and leave the file itself alone, so that its index stays
valid: the linker searches the index and a small segment of the changed entities together (as Lucene and Pyserini
search segments), until `compact` writes them into a new KB file. Every change is written to a temporary file,
synced and renamed over the old one, so that a crash leaves the changes as they were before or after it; a lock
file refuses a second writer.

A change set names the KB file it applies to (its fingerprint). `compact` records the fingerprint of the file it
writes before renaming it into place, so that an interruption between the two renames reads as either state.
"""
from __future__ import annotations

import contextlib
import datetime
import fcntl
import gzip
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from annotator.data_types import Entity
from annotator.kb.reading import entity_from_record, kb_fingerprint

Action = Literal["add", "update", "remove"]
CHANGES_SUFFIX = ".changes.json"
LOCK_SUFFIX = ".lock"
_FORMAT = 1


class KBChangeError(ValueError):
    """A change that cannot be made (bad input, an unknown or existing entity, a KB being changed elsewhere);
    nothing was written."""


@dataclass(frozen=True)
class Change:
    """One line of the change log that `entqa kb list-changes` prints."""

    action: Action
    title: str
    at: str  # ISO 8601, UTC


@dataclass(frozen=True)
class KBChanges:
    """The changes of one KB file: `entities` are searched beside it, its entries titled in `hidden` are not."""

    base: str  # kb_fingerprint of the KB file they apply to
    entities: tuple[Entity, ...] = ()  # added, or updated with a new description, in the order of the changes
    hidden: frozenset[str] = frozenset()  # titles of the KB file's entries removed or updated
    log: tuple[Change, ...] = ()
    compacted_into: str | None = None  # set by `compact` while it renames the new KB file into place

    def __bool__(self) -> bool:
        return bool(self.entities or self.hidden)

    @property
    def digest(self) -> str:
        """An identity of what the changes do (not of their log); "" for none. Caches are keyed by it."""
        if not self:
            return ""
        content = json.dumps([[e.title, e.text, e.qid] for e in self.entities] + sorted(self.hidden))
        return hashlib.sha256(content.encode()).hexdigest()[:16]


def changes_path(kb_path: str | Path) -> Path:
    """Where the changes of the KB file at `kb_path` are kept."""
    kb_path = Path(kb_path)
    return kb_path.with_name(kb_path.name + CHANGES_SUFFIX)


def read_changes(kb_path: str | Path) -> KBChanges:
    """The changes recorded for the KB file at `kb_path` (none when there is no changes file).

    Raises:
        KBChangeError: the changes were recorded for another version of the KB file (it was replaced since).
    """
    path, fingerprint = changes_path(kb_path), kb_fingerprint(kb_path)
    if not path.is_file():
        return KBChanges(fingerprint)
    stored = json.loads(path.read_text(encoding="utf-8"))
    if stored.get("compacted_into") == fingerprint:  # `compact` stopped after renaming the new KB file into place
        return KBChanges(fingerprint)
    if stored["base"] != fingerprint:
        raise KBChangeError(f"{path} holds changes of another version of {kb_path} (the file was replaced since they "
                            f"were made); delete {path} to drop them, or put the KB file they were made for back")
    return KBChanges(base=stored["base"],
                     entities=tuple(Entity(e["title"], e["text"], e.get("qid")) for e in stored["entities"]),
                     hidden=frozenset(stored["hidden"]),
                     log=tuple(Change(c["action"], c["title"], c["at"]) for c in stored["log"]))


def write_changes(kb_path: str | Path, changes: KBChanges) -> None:
    """Store `changes` for the KB file atomically (write, sync, rename)."""
    stored = {"format": _FORMAT, "base": changes.base, "compacted_into": changes.compacted_into,
              "entities": [{"title": e.title, "text": e.text, "qid": e.qid} for e in changes.entities],
              "hidden": sorted(changes.hidden),
              "log": [{"action": c.action, "title": c.title, "at": c.at} for c in changes.log]}
    write_atomically(changes_path(kb_path), (json.dumps(stored, ensure_ascii=False, indent=1) + "\n").encode())


def write_atomically(path: Path, content: bytes | Iterable[bytes]) -> None:
    """Replace `path` by `content` so that a crash at any point leaves the old file or the new one: a temporary
    file beside it, synced, renamed over it, and the folder synced."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        with open(partial, "wb") as handle:
            handle.writelines([content] if isinstance(content, bytes) else content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    sync_folder(path.parent)


def sync_folder(folder: Path) -> None:
    """Make the renames within `folder` durable."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def kb_lock(kb_path: str | Path) -> Iterator[None]:
    """Hold the KB's change lock (`<kb>.lock`, an advisory lock the system drops when the holder dies).

    Raises:
        KBChangeError: another process holds it, or the KB's folder cannot be written.
    """
    kb_path = Path(kb_path)
    path = kb_path.with_name(kb_path.name + LOCK_SUFFIX)
    try:
        handle = open(path, "a+")  # noqa: SIM115 (closed by the `with` below, once the error is told apart)
    except OSError as error:
        raise KBChangeError(f"cannot write beside {kb_path} ({error.strerror}); copy the KB file to a folder you can "
                            f"write and name the copy with --kb") from error
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            raise KBChangeError(f"{kb_path} is being changed by another command (process {handle.read().strip() or '?'}"
                                f" holds {path}); try again when it has finished") from None
        handle.truncate(0)
        handle.write(str(os.getpid()))
        handle.flush()
        yield


def read_entity_file(path: str | Path) -> list[Entity]:
    """The entities of a JSON-lines file (`.gz` too) to add or update: `{"title", "text", "qid"?}` per line, or any
    KB format `read_kb` reads.

    Raises:
        KBChangeError: naming the line: not UTF-8, not JSON, no title or no text, a title twice; or no entities.
    """
    path = Path(path)
    entities: list[Entity] = []
    first_line: dict[str, int] = {}
    with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as lines:
        for number, raw in enumerate(lines, start=1):  # bytes, so that a byte that is not UTF-8 names its line
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise KBChangeError(f"{path}:{number}: not UTF-8 ({error.reason})") from error
            if not line.strip():
                continue
            entity = _entity_of_line(line, path, number)
            if entity.title in first_line:
                raise KBChangeError(f"{path}:{number}: {entity.title!r} is also on line {first_line[entity.title]}")
            first_line[entity.title] = number
            entities.append(entity)
    if not entities:
        raise KBChangeError(f"{path} holds no entities: one JSON object per line, {{\"title\": ..., \"text\": ..., "
                            f"\"qid\": ... (optional)}}")
    return entities


def _entity_of_line(line: str, path: Path, number: int) -> Entity:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise KBChangeError(f"{path}:{number}: not JSON ({error.msg})") from error
    if not isinstance(record, dict):
        raise KBChangeError(f"{path}:{number}: not a JSON object")
    if not str(record.get("title") or record.get("wikipedia_title") or "").strip():
        raise KBChangeError(f"{path}:{number}: no title")
    try:
        entity = entity_from_record(record, path=path, number=number)
    except ValueError as error:
        raise KBChangeError(str(error)) from error
    if not entity.text:
        raise KBChangeError(f"{path}:{number}: no text: {entity.title!r} needs a description to be found and read")
    return entity


class KBEntries:
    """The entries of the KB file (titles and QIDs by row), which a change set is checked against."""

    def __init__(self, titles: Sequence[str], qids: Sequence[str | None]) -> None:
        self.titles = titles
        self._titles = frozenset(titles)
        self._title_of_qid = {q: t for t, q in zip(titles, qids) if q}

    def has(self, title: str) -> bool:
        return title in self._titles

    def title_of_qid(self, qid: str) -> str | None:
        return self._title_of_qid.get(qid)


def added(changes: KBChanges, entries: KBEntries, entities: Sequence[Entity]) -> KBChanges:
    """`changes` with `entities` added.

    Raises:
        KBChangeError: a title (or QID) is already in the KB: update changes an entity's description.
    """
    live = _Live(changes, entries)
    for entity in entities:
        existing = live.title(entity.title) or (live.title_of_qid(entity.qid) if entity.qid else None)
        if existing is not None:
            raise KBChangeError(f"{existing!r} is already in the KB{_as_qid(entity, existing)}; use `entqa kb update` "
                                f"to give it a new description")
    return _logged(replace(changes, entities=changes.entities + tuple(entities)), "add", entities)


def updated(changes: KBChanges, entries: KBEntries, entities: Sequence[Entity]) -> KBChanges:
    """`changes` with each entity's description replaced: the entity of the same title, else of the same QID
    (which then takes the new title).

    Raises:
        KBChangeError: an entity is not in the KB (add adds it).
    """
    live = _Live(changes, entries)
    delta = {e.title: e for e in changes.entities}
    hidden = set(changes.hidden)
    for entity in entities:
        existing = live.title(entity.title) or (live.title_of_qid(entity.qid) if entity.qid else None)
        if existing is None:
            raise KBChangeError(f"{entity.title!r} is not in the KB; use `entqa kb add` to add it")
        if delta.pop(existing, None) is None:
            hidden.add(existing)
        delta[entity.title] = entity
    return _logged(replace(changes, entities=tuple(delta.values()), hidden=frozenset(hidden)), "update", entities)


def removed(changes: KBChanges, entries: KBEntries, keys: Sequence[str]) -> KBChanges:
    """`changes` without the entities named by title or QID (Q followed by digits).

    Raises:
        KBChangeError: a key names no entity of the KB.
    """
    live = _Live(changes, entries)
    titles = []
    for key in keys:
        title = live.title_of_qid(key) if _is_qid(key) else live.title(key)
        if title is None:
            raise KBChangeError(f"{key!r} is not in the KB (nothing was removed)")
        titles.append(title)
    delta = {e.title: e for e in changes.entities}
    hidden = set(changes.hidden)
    for title in titles:
        if delta.pop(title, None) is None:
            hidden.add(title)
    return _logged(replace(changes, entities=tuple(delta.values()), hidden=frozenset(hidden)), "remove",
                   [Entity(title) for title in titles])


class _Live:
    """The entities a change set leaves: the KB file's entries not hidden, and its own."""

    def __init__(self, changes: KBChanges, entries: KBEntries) -> None:
        self._changes, self._entries = changes, entries
        self._delta = {e.title: e for e in changes.entities}
        self._delta_qids = {e.qid: e.title for e in changes.entities if e.qid}

    def title(self, title: str) -> str | None:
        if title in self._delta or (self._entries.has(title) and title not in self._changes.hidden):
            return title
        return None

    def title_of_qid(self, qid: str) -> str | None:
        if qid in self._delta_qids:
            return self._delta_qids[qid]
        title = self._entries.title_of_qid(qid)
        return title if title is not None and title not in self._changes.hidden else None


def _logged(changes: KBChanges, action: Action, entities: Sequence[Entity]) -> KBChanges:
    at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    return replace(changes, log=changes.log + tuple(Change(action, e.title, at) for e in entities))


def _is_qid(key: str) -> bool:
    return len(key) > 1 and key[0] == "Q" and key[1:].isdigit()


def _as_qid(entity: Entity, existing: str) -> str:
    return f" (as QID {entity.qid})" if existing != entity.title else ""
