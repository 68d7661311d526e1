"""`entqa` in process: `link` with the tiny fixture linker and (slow tier) the shipped checkpoint with its demo KB,
bad input, and what `serve` and the delegated subcommands run."""
from __future__ import annotations

import csv
import functools
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from annotator.errors import ModelLoadError
from annotator.pipeline.linker import Linker
from annotator.runtime.settings import RuntimeSettings
from annotator.settings import LinkerSettings
from annotator.uris import NIL_NAMESPACE, dbpedia_uri, not_in_wiki_uri
from annotator.cli import command as cli
from nif import parse_document

REPO = Path(__file__).resolve().parents[2]
# Absolute, so that nothing could take it for another KB than the one the shipped index was built from.
DEMO_KB = REPO / "models" / "entqa-minilm" / "kb" / "entities.jsonl.gz"
TEXT = "Bill Clinton met Nelson Mandela in Pretoria. Mandela thanked Clinton for his support."
# What the demo KB links in TEXT (tests/test_default_model.py checks the same through the service).
LINKED = [("Bill Clinton", "Bill Clinton"), ("Nelson Mandela", "Nelson Mandela"), ("Pretoria", "Pretoria"),
          ("Mandela", "Nelson Mandela"), ("Clinton", "Bill Clinton")]
SPANS = [(0, 12), (17, 31), (61, 68), (73, 76)]  # Bill Clinton, Nelson Mandela, Clinton, his
SERVICE_SETTINGS = (cli.MODEL_DIR_ENV, cli.KB_PATH_ENV, cli.INDEX_DIR_ENV, cli.BIND_ENV, cli.WORKERS_ENV)

Run = Callable[..., tuple[int, str, str]]


@dataclass(frozen=True)
class LinkingModel:
    """The KB that `entqa link` is given, and the (surface, URI) pairs its linker answers for TEXT: end to end, and
    at SPANS."""

    kb: Path
    linked: list[tuple[str, str]]
    at_spans: list[tuple[str, str]]


@pytest.fixture(scope="module")
def shared_load_linker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Linker]]:
    """`cli.load_linker`, loading each model and KB once for the module, with an empty cache of its own (nothing may
    be built)."""
    cache = tmp_path_factory.mktemp("cache")
    load = cli.load_linker  # before the tests patch it

    @functools.cache
    def load_linker(*args: object, **kwargs: object) -> Linker:
        with pytest.MonkeyPatch.context() as patch:  # only while loading: the tiny fixtures set their own cache
            patch.setenv("ENTQA_CACHE", str(cache))
            return load(*args, **kwargs)

    yield load_linker
    assert not any(cache.iterdir())  # the shipped index served the demo KB


@pytest.fixture(params=["tiny", pytest.param("shipped", marks=pytest.mark.slow)])
def model(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> LinkingModel:
    """What `entqa link` loads: the tiny fixture linker (its answers taken from it), or the shipped checkpoint with
    its demo KB (its answers pinned)."""
    if request.param == "shipped":
        monkeypatch.setattr(cli, "load_linker", request.getfixturevalue("shared_load_linker"))
        linked = [(surface, dbpedia_uri(title)) for surface, title in LINKED]
        at_spans = [("Bill Clinton", dbpedia_uri("Bill Clinton")), ("Nelson Mandela", dbpedia_uri("Nelson Mandela")),
                    ("Clinton", dbpedia_uri("Bill Clinton")), ("his", not_in_wiki_uri(NIL_NAMESPACE, "his"))]
        return LinkingModel(DEMO_KB, linked, at_spans)
    tiny_linker, tiny_kb = request.getfixturevalue("tiny_linker"), request.getfixturevalue("tiny_kb")

    def load_linker(model_dir: Path, *, kb_path: Path | None, index_dir: Path | None, device: str | None,
                    settings: LinkerSettings) -> Linker:
        assert kb_path == tiny_kb
        return tiny_linker

    monkeypatch.setattr(cli, "load_linker", load_linker)
    return LinkingModel(tiny_kb, [(m.surface, m.uri) for m in tiny_linker.link(TEXT)],
                        [(m.surface, m.uri) for m in tiny_linker.link(TEXT, SPANS)])


@pytest.fixture
def entqa(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """Runs `entqa ARGS...` (standard input: `stdin`); returns the exit status, standard output and error."""

    def run(*args: str | Path, stdin: str = "") -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
        status = cli.main([str(arg) for arg in args])
        out, err = capsys.readouterr()
        return status, out, err

    return run


@pytest.fixture
def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "clinton.txt"
    path.write_text(TEXT + "\n", encoding="utf-8")
    return path


def _surfaces_and_uris_from_tsv(out: str) -> list[tuple[str, str]]:
    rows = list(csv.DictReader(io.StringIO(out), delimiter="\t"))
    assert all(TEXT[int(row["start"]):int(row["end"])] == row["surface"] for row in rows)
    assert all(0 < float(row["score"]) <= 1 for row in rows)
    return [(row["surface"], row["uri"]) for row in rows]


def _surfaces_and_uris_from_json(out: str) -> list[tuple[str, str]]:
    [document] = json.loads(out)
    return [(m["surface"], m["uri"]) for m in document["mentions"]]


def _surfaces_and_uris_from_jsonl(out: str) -> list[tuple[str, str]]:
    [line] = out.splitlines()
    return _surfaces_and_uris_from_json(f"[{line}]")


def _surfaces_and_uris_from_nif(out: str) -> list[tuple[str, str]]:
    document = parse_document(out.encode("utf-8"))
    assert document.text == TEXT + "\n"
    assert all(a.confidence is not None and 0 < a.confidence <= 1 for a in document.annotations)
    return [(document.text[a.start:a.end], uri) for a in document.annotations for uri in a.uris]


@pytest.mark.parametrize("output_format, read", [
    ("tsv", _surfaces_and_uris_from_tsv), ("json", _surfaces_and_uris_from_json),
    ("jsonl", _surfaces_and_uris_from_jsonl), ("nif", _surfaces_and_uris_from_nif)])
def test_link_prints_the_mentions_of_a_text_file(entqa: Run, model: LinkingModel, text_file: Path, output_format: str,
                                                 read: Callable[[str], list[tuple[str, str]]]) -> None:
    status, out, err = entqa("link", text_file, "--kb", model.kb, "--format", output_format)
    assert status == 0, err
    assert read(out) == model.linked


def test_link_reads_standard_input_and_names_the_document_by_its_path(entqa: Run, model: LinkingModel) -> None:
    status, out, _ = entqa("link", "-", "--kb", model.kb, "--format", "jsonl", stdin=TEXT)
    assert status == 0
    document = json.loads(out)
    assert document["id"] == "-"
    assert [(m["surface"], m["uri"]) for m in document["mentions"]] == model.linked


def test_link_json_lines_in_batches_and_at_given_spans(entqa: Run, model: LinkingModel, tmp_path: Path) -> None:
    # Three end-to-end documents over two batches, and one document with spans (D2KB) between them.
    lines = [{"id": 1, "text": TEXT}, {"id": "spans", "text": TEXT, "spans": SPANS},
             {"id": "empty", "text": ""}, {"id": "again", "text": TEXT}]
    path = tmp_path / "documents.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    status, out, err = entqa("link", path, "--kb", model.kb, "--format", "jsonl", "--batch-size", "2")
    assert status == 0, err
    documents = [json.loads(line) for line in out.splitlines()]
    assert [d["id"] for d in documents] == [1, "spans", "empty", "again"]
    assert [(m["surface"], m["uri"]) for m in documents[0]["mentions"]] == model.linked
    # every given span is answered, and nothing else: an entity, or NIL
    given = documents[1]["mentions"]
    assert [(m["start"], m["end"]) for m in given] == SPANS
    assert [(m["surface"], m["uri"]) for m in given] == model.at_spans
    assert all(m["title"] is None for m in given if m["uri"].startswith(NIL_NAMESPACE))
    assert documents[2]["mentions"] == []
    assert documents[3]["mentions"] == documents[0]["mentions"]  # the second batch links as the first


@pytest.mark.parametrize("content, message", [
    ('{"id": 1, "text": "a"}\n{"id": 2, "text": "b"', "documents.jsonl, line 2: "),
    ('["just", "a", "list"]', "line 1: expected a JSON object with the keys id, text, spans"),
    ('{"id": 1, "txt": "Paris"}', "line 1: unknown key 'txt'; a document has the keys id, text, spans"),
    ('{"id": 1}', "line 1: 'text' must be a string, got None"),
    ('{"text": "Paris"}', "line 1: 'id' must be a string or an integer, got None"),
    ('{"id": 1, "text": "Paris", "spans": [[0, 9]]}', "line 1: span [0, 9] is not [start, end] with "
                                                      "0 <= start < end <= 5"),
    ('{"id": 1, "text": "Paris", "spans": [0, 5]}', "line 1: span 0 is not [start, end]"),
])
def test_bad_json_lines_fail_with_the_line_and_what_is_wrong(entqa: Run, monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path, content: str, message: str) -> None:
    monkeypatch.setattr(cli, "load_linker", _must_not_load)
    path = tmp_path / "documents.jsonl"
    path.write_text(content, encoding="utf-8")
    status, out, err = entqa("link", path)
    assert (status, out) == (2, "")
    assert err.startswith("entqa link: error: ") and message in err


def test_unreadable_inputs_fail_before_the_model_loads(entqa: Run, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    monkeypatch.setattr(cli, "load_linker", _must_not_load)
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Zürich".encode("latin-1"))
    assert entqa("link", latin1)[::2] == (2, f"entqa link: error: {latin1} is not UTF-8 text: 'utf-8' codec can't "
                                             "decode byte 0xfc in position 1: invalid start byte\n")
    missing = tmp_path / "missing.txt"
    assert entqa("link", missing)[::2] == (2, f"entqa link: error: cannot read {missing}: No such file or directory\n")


def test_bad_options_name_the_valid_choices(entqa: Run, capsys: pytest.CaptureFixture[str], text_file: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        entqa("link", text_file, "--format", "xml")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "entqa link: error: argument --format: invalid choice: 'xml'" in err
    assert all(name in err for name in ("tsv", "jsonl", "nif"))


def test_a_missing_kb_fails_before_the_model_loads(entqa: Run, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str], text_file: Path,
                                                  tmp_path: Path) -> None:
    monkeypatch.setattr(cli, "load_linker", _must_not_load)
    with pytest.raises(SystemExit) as exit_info:
        entqa("link", text_file, "--kb", tmp_path / "nowhere.jsonl.gz")
    assert exit_info.value.code == 2
    assert f"entqa link: error: argument --kb: no such file or folder: {tmp_path / 'nowhere.jsonl.gz'}" in \
        capsys.readouterr().err


def test_link_reads_the_services_settings_from_the_environment(entqa: Run, monkeypatch: pytest.MonkeyPatch,
                                                               text_file: Path) -> None:
    asked: list[dict[str, object]] = []

    def load_linker(*args: object, **kwargs: object) -> object:
        asked.append(kwargs)
        raise ModelLoadError("stop here")

    monkeypatch.setattr(cli, "load_linker", load_linker)
    monkeypatch.setenv(cli.KB_PATH_ENV, str(DEMO_KB))
    monkeypatch.setenv("ENTQA_TOP_K", "8")
    monkeypatch.setenv("ENTQA_CPU_PRECISION", "fp32")
    assert entqa("link", text_file)[0] == 1
    assert asked[0]["kb_path"] == DEMO_KB
    assert asked[0]["settings"] == LinkerSettings(model={"top_k": 8}, runtime=RuntimeSettings(cpu_precision="fp32"))
    monkeypatch.setenv("ENTQA_CPU_PRECISION", "fp16")
    assert entqa("link", text_file) == (1, "", "entqa link: error: ENTQA_CPU_PRECISION: Input should be 'auto', "
                                              "'bf16', 'int8' or 'fp32', got 'fp16'\n")


def test_a_model_that_does_not_load_is_an_error(entqa: Run, monkeypatch: pytest.MonkeyPatch, text_file: Path) -> None:
    def load_linker(*args: object, **kwargs: object) -> object:
        raise ModelLoadError("entity index built for another KB")

    monkeypatch.setattr(cli, "load_linker", load_linker)
    status, out, err = entqa("link", text_file)
    assert (status, out) == (1, "")
    assert err.endswith(" ...\nentqa link: error: entity index built for another KB\n")  # after what it was loading


def test_serve_runs_gunicorn_with_the_project_config_and_the_given_settings(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # a copy, so that what serve sets for gunicorn does not outlive the test
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k not in SERVICE_SETTINGS})
    run: list[list[str]] = []

    def execv(path: str, argv: list[str]) -> None:
        run.append([path, *argv])
        raise SystemExit(0)  # execv does not return

    monkeypatch.setattr(os, "execv", execv)
    with pytest.raises(SystemExit):
        cli.main(["serve", "--kb", str(DEMO_KB), "--bind", "127.0.0.1:9999", "--workers", "2"])
    [[path, *argv]] = run
    assert argv[0] == path == sys.executable
    assert argv[1:] == ["-m", "gunicorn", "--config", str(cli.GUNICORN_CONFIG), "wsgi:app"]
    assert cli.GUNICORN_CONFIG.read_text(encoding="utf-8") == (REPO / "gunicorn.conf.py").read_text(encoding="utf-8")
    assert {name: os.environ.get(name) for name in SERVICE_SETTINGS} == {
        cli.MODEL_DIR_ENV: str(cli.DEFAULT_MODEL_DIR), cli.KB_PATH_ENV: str(DEMO_KB), cli.INDEX_DIR_ENV: None,
        cli.BIND_ENV: "127.0.0.1:9999", cli.WORKERS_ENV: "2"}


@pytest.mark.parametrize("command, own_option", [("index", "--index-type"), ("train", "--init-reader"),
                                                 ("evaluate", "--in-process")])
def test_the_other_subcommands_are_their_modules_command_lines(capsys: pytest.CaptureFixture[str], command: str,
                                                               own_option: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main([command, "--help"])
    assert exit_info.value.code == 0
    help_text = capsys.readouterr().out
    assert help_text.startswith(f"usage: entqa {command} ") and own_option in help_text


def _must_not_load(*args: object, **kwargs: object) -> object:
    raise AssertionError("the model must not load for input that cannot be read")
