"""`entqa link --ray`'s input, output folder and errors, without starting Ray."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from annotator.cli import command as cli
from annotator.cli import distributed
from annotator.cli.documents import InputDocument, InputError

# pyarrow comes with the ray extra
pyarrow = pytest.importorskip("pyarrow", reason='pyarrow is not installed: pip install -e ".[ray]"')
pyarrow_parquet = pytest.importorskip("pyarrow.parquet")


def test_parquet_and_json_lines_are_read_alike(tmp_path: Path) -> None:
    rows = [{"id": "p1", "text": "Paris", "spans": None}, {"id": "p2", "text": "Bill Clinton", "spans": [[0, 4]]}]
    pyarrow_parquet.write_table(pyarrow.Table.from_pylist(rows), tmp_path / "a.parquet")
    (tmp_path / "b.jsonl").write_text(json.dumps({"id": "j1", "text": "Berlin"}) + "\n")
    assert distributed.read_corpus([str(tmp_path / "a.parquet"), str(tmp_path / "b.jsonl")]) == [
        InputDocument("p1", "Paris"), InputDocument("p2", "Bill Clinton", ((0, 4),)), InputDocument("j1", "Berlin")]


@pytest.mark.parametrize(("lines", "error"), [
    ([{"id": 1, "text": "a"}, {"id": 1, "text": "b"}], "id 1 occurs more than once"),
    ([{"id": 1, "text": "a"}, {"id": "2", "text": "b"}], "ids mix strings and integers"),
    ([{"id": 1, "text": "a", "spans": [[0, 5]]}], "line 1: span [0, 5]"),
])
def test_a_bad_corpus_fails_with_what_is_wrong(tmp_path: Path, lines: list[dict[str, object]], error: str) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(InputError, match=re.escape(error)):
        distributed.read_corpus([str(path)])


def test_linked_ids_are_those_of_finished_part_files(tmp_path: Path) -> None:
    (tmp_path / "part-1-00000.jsonl").write_text('{"id": "a", "mentions": []}\n{"id": "b", "mentions": []}\n')
    pyarrow_parquet.write_table(pyarrow.table({"id": ["c"]}), tmp_path / "part-1-00001.parquet")
    (tmp_path / "part-1-00002.jsonl.tmp").write_text('{"id": "d", "mentions"')
    assert distributed.linked_ids(tmp_path) == {"a", "b", "c"}


def test_without_ray_the_command_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray: ImportError
    (tmp_path / "corpus.jsonl").write_text('{"id": "a", "text": "Paris"}\n')
    assert cli.main(["link", "--ray", str(tmp_path / "corpus.jsonl"), "--output", str(tmp_path / "out")]) == 2
    assert 'pip install -e ".[ray]"' in capsys.readouterr().err


def test_ray_options_name_the_valid_choices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "text": "Paris"}\n')
    for args, message in [(["--ray", "--output", "out", "--format", "tsv"], "--format must be one of jsonl, parquet"),
                          (["--ray"], "--ray needs --output OUT_DIR"),
                          (["--output", "out"], "--output needs --ray"),
                          (["--format", "parquet"], "--format parquet needs --ray")]:
        with pytest.raises(SystemExit):
            cli.main(["link", str(corpus), *args])
        assert message in capsys.readouterr().err
