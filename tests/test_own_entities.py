"""The README's "Your own entities" with the shipped checkpoint (slow tier): entities the KBs lack, added to a copy of
the demo KB with `entqa kb add`, are linked by `entqa link` and, after SIGHUP, by a served gunicorn."""
from __future__ import annotations

import json
import re
import shutil
import signal
import time
import urllib.request
from pathlib import Path

import pytest

from annotator.kb.__main__ import main as kb_main
from bench.gunicorn_process import gunicorn_serving
from annotator.cli import command as cli

REPO = Path(__file__).resolve().parents[1]
DEMO_KB = REPO / "models" / "entqa-minilm" / "kb" / "entities.jsonl.gz"
NEW_ENTITIES = REPO / "examples" / "new-entities.jsonl"
TEXT = "OpenAI announced a new version of ChatGPT, said Sam Altman in San Francisco."
NEW = ["OpenAI", "ChatGPT", "Sam Altman"]


def titles_linked_by_the_command(kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 text: str = TEXT) -> list[str]:
    path = tmp_path / "text.txt"
    path.write_text(text + "\n", encoding="utf-8")
    assert cli.main(["link", "--kb", str(kb), str(path)]) == 0
    return [row.split("\t")[4] for row in capsys.readouterr().out.splitlines()[1:]]


def titles_served(url: str) -> list[str]:
    request = urllib.request.Request(f"{url}/api/link", data=json.dumps({"text": TEXT}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return [mention["title"] for mention in json.load(response)["mentions"]]


@pytest.mark.slow  # the shipped checkpoint, twice
def test_added_entities_are_linked_by_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENTQA_CPU_PRECISION", "int8")  # the precision of the shipped pins
    kb = Path(shutil.copy(DEMO_KB, tmp_path / "my-kb.jsonl.gz"))
    assert titles_linked_by_the_command(kb, tmp_path, capsys) == ["San Francisco"]
    assert kb_main(["--kb", str(kb), "add", str(NEW_ENTITIES)]) == 0
    assert "add: 8 entities" in capsys.readouterr().out
    assert titles_linked_by_the_command(kb, tmp_path, capsys) == [*NEW, "San Francisco"]
    made_up = tmp_path / "made-up.jsonl"  # a name no text and no pretrained model has seen
    made_up.write_text(json.dumps({"title": "Zorvexa Labs", "text": "Zorvexa Labs is a made-up robotics company in "
                                   "Tallinn that builds warehouse robots named Quillbots."}) + "\n", encoding="utf-8")
    assert kb_main(["--kb", str(kb), "add", str(made_up)]) == 0
    capsys.readouterr()
    assert "Zorvexa Labs" in titles_linked_by_the_command(kb, tmp_path, capsys,
                                                          "Zorvexa Labs showed its newest Quillbot in Tallinn.")


@pytest.mark.slow  # the shipped checkpoint under gunicorn
def test_a_served_linker_takes_added_entities_up_on_sighup(tmp_path: Path) -> None:
    kb = Path(shutil.copy(DEMO_KB, tmp_path / "my-kb.jsonl.gz"))
    log = tmp_path / "gunicorn.log"
    env = {"ENTQA_KB_PATH": str(kb), "ENTQA_CPU_PRECISION": "int8"}
    with gunicorn_serving(env=env, log_path=log) as (url, _, master):
        assert "OpenAI" not in titles_served(url)
        assert kb_main(["--kb", str(kb), "add", str(NEW_ENTITIES)]) == 0
        master.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 120
        while not re.search(r"KB reloaded \(SIGHUP\)", log.read_text(encoding="utf-8", errors="replace")):
            assert time.monotonic() < deadline, "no reload logged"
            time.sleep(0.2)
        assert [title for title in titles_served(url) if title in NEW] == NEW
