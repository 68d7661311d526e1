"""`pip install .` into a fresh virtual environment: the names it puts at the top of site-packages, then `entqa link`
and `entqa serve` from another folder, the installed package alone with the checkpoint it carries (minutes: pip
installs torch and the rest)."""
from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from bench.gunicorn_process import free_port, stop, wait_for_health
from tests.cli.test_cli import LINKED, REPO, TEXT

pytestmark = pytest.mark.slow

INSTALL_TIMEOUT_S = 1800
STARTUP_TIMEOUT_S = 180


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the work tree as git sees it (uncommitted changes included), which `venv` installs from."""
    source = tmp_path_factory.mktemp("source")
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=REPO,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (REPO / name).exists():  # listed but deleted in the work tree: not part of it
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name, follow_symlinks=False)
    return source


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, source: Path) -> Path:
    """A plain virtual environment (no system site-packages) with the project installed by `pip install .`."""
    environment = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", environment], check=True)
    subprocess.run([environment / "bin" / "python", "-m", "pip", "install", "--quiet", "."], cwd=source, check=True,
                   timeout=INSTALL_TIMEOUT_S)
    return environment


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A folder outside the checkout to run from."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def _environment(cache: Path) -> dict[str, str]:
    # Nothing of this checkout or its settings: no PYTHONPATH, no ENTQA_* but an empty cache of its own.
    kept = {name: value for name, value in os.environ.items()
            if not name.startswith("ENTQA_") and name not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**kept, "ENTQA_CACHE": str(cache)}


def test_the_install_leaves_the_clone_as_it_was(venv: Path, source: Path) -> None:
    assert not (source / "build").exists() and not list(source.glob("*.egg-info"))


def test_the_installed_top_level_names_are_annotator_nif_gerbil_and_wsgi(venv: Path) -> None:
    """The design card's four and nothing else: no `web` (web.py's module), no `entqa` (the command's name)."""
    (dist_info,) = venv.glob("lib/python3*/site-packages/entqa_nif_annotator-*.dist-info")
    installed = {Path(row[0]).parts[0] for row in csv.reader(io.StringIO((dist_info / "RECORD").read_text()))}
    assert {name for name in installed if name not in ("..", "__pycache__", dist_info.name)} == {
        "annotator", "nif", "gerbil", "wsgi.py"}
    assert set((dist_info / "top_level.txt").read_text().split()) == {"annotator", "nif", "gerbil", "wsgi"}
    assert (venv / "bin" / "entqa").is_file()


def test_the_installed_package_carries_the_checkpoint(venv: Path, elsewhere: Path) -> None:
    printed = subprocess.run([venv / "bin" / "python", "-c", "import annotator; print(annotator.DEFAULT_MODEL_DIR)"],
                             cwd=elsewhere, env=_environment(elsewhere / "cache"), check=True, capture_output=True,
                             text=True).stdout.strip()
    assert Path(printed).is_relative_to(venv.resolve()) and (Path(printed) / "index" / "manifest.json").is_file()


def test_entqa_link_from_another_folder(venv: Path, elsewhere: Path) -> None:
    (elsewhere / "clinton.txt").write_text(TEXT, encoding="utf-8")
    linked = subprocess.run([venv / "bin" / "entqa", "link", "clinton.txt"], cwd=elsewhere,
                            env=_environment(elsewhere / "cache"), check=True, capture_output=True, text=True).stdout
    rows = list(csv.DictReader(io.StringIO(linked), delimiter="\t"))
    assert [(row["surface"], row["title"]) for row in rows] == LINKED
    assert not (elsewhere / "cache").exists()  # the shipped index served the demo KB: nothing was built


def test_entqa_serve_from_another_folder(venv: Path, elsewhere: Path) -> None:
    port = free_port()
    server = subprocess.Popen([venv / "bin" / "entqa", "serve", "--bind", f"127.0.0.1:{port}"], cwd=elsewhere,
                              env=_environment(elsewhere / "cache"), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        health = wait_for_health(f"http://127.0.0.1:{port}/health", server, STARTUP_TIMEOUT_S)
        # The web page's template and script are package data: the installed app serves them.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
            page = response.read().decode("utf-8")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/link.js", timeout=10) as response:
            script = response.read().decode("utf-8")
    finally:
        stop(server)
    assert isinstance(health["entities"], int) and Path(health["model"]).is_relative_to(venv.resolve())
    assert "<title>EntQA entity linker</title>" in page and "api/link" in script
