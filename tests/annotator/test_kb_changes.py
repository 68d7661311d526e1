"""A KB that grows (annotator.kb.changes, annotator.kb.editing, the segment searched beside the index): add, update,
remove and compact on the tiny KB, each bad input refused with nothing written, interruptions, the lock."""
from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import annotator.kb.changes
from annotator.data_types import Entity
from annotator.entity_index.segment import SegmentedIndex
from annotator.kb.__main__ import main as kb_main
from annotator.kb.changes import KBChangeError, changes_path, kb_lock, read_changes, read_entity_file
from annotator.kb.editing import KBEditor
from annotator.kb.reading import read_kb
from annotator.pipeline.document import Document
from annotator.pipeline.linker import Linker
from tests.conftest import TINY_RUNTIME

NEW = Entity("Zorvexa Labs", "Zorvexa Labs is a made-up robotics company in Tallinn that builds Quillbots.", "Q999001")


@pytest.fixture
def kb(tmp_path: Path, tiny_kb: Path) -> Path:
    """A copy of the tiny KB, which the tests change."""
    return Path(shutil.copy(tiny_kb, tmp_path / "kb.jsonl"))


@pytest.fixture
def editor(kb: Path, tiny_checkpoint: Path, entqa_cache: Path) -> KBEditor:
    return KBEditor.open(tiny_checkpoint, kb, runtime=TINY_RUNTIME, device="cpu")


def linker(checkpoint: Path, kb: Path) -> Linker:
    return Linker.from_pretrained(checkpoint, kb_path=kb, device="cpu", config_overrides={"threshold": 0.0},
                                  runtime=TINY_RUNTIME)


def write_lines(path: Path, *lines: str | bytes) -> Path:
    path.write_bytes(b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines))
    return path


def entity_line(entity: Entity) -> str:
    return json.dumps({"title": entity.title, "text": entity.text, "qid": entity.qid})


def test_an_added_entity_is_searched_and_read_beside_the_index(editor: KBEditor, kb: Path, tiny_checkpoint: Path):
    before = linker(tiny_checkpoint, kb)
    changes = editor.add([NEW])
    after = linker(tiny_checkpoint, kb)

    assert isinstance(after.index, SegmentedIndex) and not isinstance(before.index, SegmentedIndex)
    assert after.index.titles == [*before.index.titles, NEW.title] and after.index.qids[-1] == NEW.qid
    assert after.describe()["kb_changes"] == changes.digest != "" and before.describe()["kb_changes"] == ""
    row = len(before.index)
    assert after.descriptions[row] == NEW.text
    vector = after.index.segment.embeddings[:1].astype(np.float32)
    _, rows = after.index.search(vector, 3)
    assert rows[0, 0] == row and rows.shape == (1, 3)
    expected = editor.models.builder.entity_inputs([NEW.title], [NEW.text])[0]
    assert after.index.entity_token_ids([row, 0]) == [expected, before.index.entity_token_ids([0])[0]]


def test_update_masks_the_old_entry_and_remove_hides_it(editor: KBEditor, kb: Path, tiny_checkpoint: Path):
    served = linker(tiny_checkpoint, kb)
    base = served.index
    editor.update([Entity("Berlin", "Berlin is a made-up name for a lighthouse.", "Q64")])
    editor.remove(["Q142", "Paris Hilton"])
    index = served.reloaded().index

    masked = {base.titles.index(title) for title in ("Berlin", "France", "Paris Hilton")}
    assert {row for row, title in enumerate(index.titles) if title == ""} == masked
    assert index.titles[len(base):] == ["Berlin"]
    _, rows = index.search(np.asarray(base.embeddings, dtype=np.float32), len(index))
    assert not set(rows.ravel()) & masked and rows.shape[1] == len(index) - len(masked)
    assert read_changes(kb).hidden == {"Berlin", "France", "Paris Hilton"}


def test_removing_an_added_entity_leaves_no_change(editor: KBEditor, kb: Path):
    editor.add([NEW])
    changes = editor.remove([NEW.title])
    assert not changes and changes.digest == "" and [c.action for c in changes.log] == ["add", "remove"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda e: e.add([Entity("Paris", "Another Paris.")]), "'Paris' is already in the KB; use `entqa kb update`"),
    (lambda e: e.add([Entity("Paris (city)", "Another.", "Q90")]), "'Paris' is already in the KB (as QID Q90)"),
    (lambda e: e.update([Entity("Atlantis", "A made-up city.")]), "'Atlantis' is not in the KB; use `entqa kb add`"),
    (lambda e: e.remove(["Berlin", "Atlantis"]), "'Atlantis' is not in the KB (nothing was removed)"),
    (lambda e: e.remove(["Q1"]), "'Q1' is not in the KB"),
])
def test_a_change_that_cannot_be_made_writes_nothing(editor: KBEditor, kb: Path, change, message: str):
    editor.add([NEW])
    stored = changes_path(kb).read_bytes()
    with pytest.raises(KBChangeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        change(editor)
    assert changes_path(kb).read_bytes() == stored


@pytest.mark.parametrize(("lines", "message"), [
    (['{"title": "A", "text": "a"}', '{"text": "no title"}'], ":2: no title"),
    (['{"title": "A"}'], ":1: no text"),
    (['{"title": "A", "text": ""}'], ":1: no text"),
    (["", "   "], "holds no entities"),
    (['{"title": "A", "text": "a"}', b'{"title": "B\xff", "text": "b"}'], ":2: not UTF-8"),
    (['{"title": "A", "text": "a"', ], ":1: not JSON"),
    (['["A", "a"]'], ":1: not a JSON object"),
    (['{"title": "A", "text": "a"}', '{"title": "B", "text": "b"}', '{"title": "A", "text": "c"}'],
     ":3: 'A' is also on line 1"),
])
def test_bad_entity_files_are_refused_naming_the_line(tmp_path: Path, lines: list, message: str):
    with pytest.raises(KBChangeError, match=message):
        read_entity_file(write_lines(tmp_path / "new.jsonl", *lines))


def test_the_kb_formats_and_gzip_are_read(tmp_path: Path):
    path = tmp_path / "new.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"wikipedia_title": "Quillbot", "text": ["Quillbot", "A made-up robot."],
                                 "wikidata_info": {"wikidata_id": "Q999002"}}) + "\n")
    assert read_entity_file(path) == [Entity("Quillbot", "A made-up robot.", "Q999002")]


def test_the_command_refuses_bad_input_before_loading_anything(kb: Path, tmp_path: Path, tiny_checkpoint: Path,
                                                               capsys: pytest.CaptureFixture[str]):
    bad = write_lines(tmp_path / "new.jsonl", '{"title": "A", "text": "a"}', '{"title": "A", "text": "b"}')
    assert kb_main(["--model", str(tiny_checkpoint), "--kb", str(kb), "add", str(bad)]) == 1
    assert "new.jsonl:2: 'A' is also on line 1" in capsys.readouterr().err
    assert not changes_path(kb).exists()


def test_the_command_adds_lists_and_compacts(kb: Path, tmp_path: Path, tiny_checkpoint: Path, entqa_cache: Path,
                                             capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ENTQA_CPU_PRECISION", "fp32")
    common = ["--model", str(tiny_checkpoint), "--kb", str(kb)]
    new = write_lines(tmp_path / "new.jsonl", entity_line(NEW))
    assert kb_main([*common, "add", str(new)]) == 0
    assert kb_main([*common, "remove", "Lake Geneva"]) == 0
    assert kb_main([*common, "list-changes"]) == 0
    out = capsys.readouterr().out
    assert "add     Zorvexa Labs" in out and "remove  Lake Geneva" in out
    assert kb_main([*common, "compact"]) == 0
    assert [e.title for e in read_kb(kb)][-2:] == ["Café", "Zorvexa Labs"]
    assert kb_main([*common, "list-changes"]) == 0
    assert capsys.readouterr().out.endswith(f"{kb}: no changes\n")


def test_compact_writes_the_changes_into_the_kb_and_its_index(editor: KBEditor, kb: Path, tiny_checkpoint: Path):
    editor.add([NEW])
    editor.update([Entity("Berlin", "Berlin is a made-up lighthouse.", "Q64")])
    editor.remove(["Lake Geneva"])
    changed = linker(tiny_checkpoint, kb)
    queries = np.asarray(changed.index.base.embeddings, dtype=np.float32)
    directory = editor.compact()

    compacted = changed.reloaded()  # the KB file was replaced: its new index is loaded
    assert not changes_path(kb).exists() and compacted.index.directory == directory
    assert not isinstance(compacted.index, SegmentedIndex) and compacted.describe()["kb_changes"] == ""
    live = [title for title in changed.index.titles if title]
    assert compacted.index.titles == live == [e.title for e in read_kb(kb)]
    assert read_kb(kb).__next__() == Entity("Paris", "Paris is the capital and largest city of France, on the river "
                                                      "Seine.", "Q90")

    def found(linker: Linker) -> list[list[str]]:
        return [[linker.index.titles[row] for row in rows] for rows in linker.index.search(queries, 5)[1]]

    assert found(compacted) == found(changed)  # the same vectors, nothing encoded again


def test_an_interrupted_change_leaves_the_kb_as_it_was(editor: KBEditor, kb: Path, monkeypatch: pytest.MonkeyPatch):
    editor.add([NEW])
    stored = changes_path(kb).read_bytes()

    def killed(source, target):
        raise KeyboardInterrupt  # as a kill between the write and the rename

    monkeypatch.setattr(annotator.kb.changes.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        editor.remove(["Berlin"])
    assert changes_path(kb).read_bytes() == stored
    assert [p.name for p in kb.parent.iterdir() if p.name.endswith(".partial")] == []


def test_compact_interrupted_before_or_after_the_kb_rename(editor: KBEditor, kb: Path, tiny_checkpoint: Path,
                                                           monkeypatch: pytest.MonkeyPatch):
    editor.add([NEW])
    old_kb, changes = kb.read_bytes(), read_changes(kb)
    real_replace = os.replace

    def killed_at_the_kb(source, target):
        if Path(target) == kb:
            raise KeyboardInterrupt
        real_replace(source, target)

    monkeypatch.setattr(annotator.kb.editing.os, "replace", killed_at_the_kb)
    with pytest.raises(KeyboardInterrupt):
        editor.compact()
    assert kb.read_bytes() == old_kb and read_changes(kb).digest == changes.digest  # as before
    monkeypatch.undo()

    real_unlink = Path.unlink

    def killed_at_the_end(self, missing_ok=False):  # before the changes file goes
        if self == changes_path(kb):
            raise KeyboardInterrupt
        real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(annotator.kb.editing.Path, "unlink", killed_at_the_end)
    with pytest.raises(KeyboardInterrupt):
        editor.compact()
    monkeypatch.undo()
    assert changes_path(kb).exists() and not read_changes(kb)  # as after: the changes are in the file
    assert linker(tiny_checkpoint, kb).index.titles[-1] == NEW.title


def test_a_second_writer_is_refused(editor: KBEditor, kb: Path):
    with kb_lock(kb), pytest.raises(KBChangeError, match=f"{kb} is being changed by another command"):
        editor.add([NEW])
    assert not changes_path(kb).exists()


def test_changes_of_another_version_of_the_file_are_refused(editor: KBEditor, kb: Path):
    editor.add([NEW])
    write_lines(kb, entity_line(Entity("Berlin", "Berlin.")))
    with pytest.raises(KBChangeError, match="holds changes of another version"):
        read_changes(kb)


def test_a_reloaded_linker_sees_the_changes_and_the_old_one_does_not(editor: KBEditor, kb: Path,
                                                                      tiny_checkpoint: Path):
    served = linker(tiny_checkpoint, kb)
    editor.add([NEW])
    reloaded = served.reloaded()
    assert reloaded.index.titles[-1] == NEW.title and served.index.titles[-1] != NEW.title
    assert reloaded.reading.reader is served.reading.reader and reloaded.index.base is served.index
    editor.compact()
    assert served.reloaded().index.titles == [e.title for e in read_kb(kb)]


def test_the_name_test_reads_an_added_entity_by_its_title(editor: KBEditor, kb: Path, tiny_checkpoint: Path):
    editor.add([NEW])
    tested = Linker.from_pretrained(tiny_checkpoint, kb_path=kb, device="cpu", runtime=TINY_RUNTIME,
                                    config_overrides={"threshold": 0.0, "name_test": True})
    document = Document.tokenized("Zorvexa Labs opened in Tallinn.", None, tested.builder)
    row = len(tested.index) - 1  # the added entity: past the rows the KB file's name priors cover
    other = [tested.index.titles.index("Mount Everest")]
    (keep,) = tested.reading.name_test.readable(document, [np.array([row, *other])])
    assert keep.tolist() == [True, False]
