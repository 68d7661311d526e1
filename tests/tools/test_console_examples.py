"""The console examples of the README and the docs print what they show (slow tier: the shipped checkpoint, several
times), and the block reader splits commands from their output."""
from __future__ import annotations

from pathlib import Path

import pytest

from tools.console_examples import REPOSITORY, console_blocks, differences, run_block, scratch_folder

DOCUMENTS = ["README.md", "docs/command-line.md", "docs/own-entities.md"]


def test_blocks_split_commands_from_their_output_and_leave_out_the_services(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n```console\n$ printf 'a\\nb\\n' \\\n  | sort -r\nb\na\n$ true\n```\n"
                    "```console\n$ curl -s http://127.0.0.1:8080/health\n{}\n```\n", encoding="utf-8")
    (block,) = console_blocks(page)
    assert [(step.command, step.shown) for step in block.steps] == [("printf 'a\\nb\\n' \\\n  | sort -r", "b\na"),
                                                                     ("true", "")]
    printed = run_block(block, tmp_path)
    assert printed == ["b\na", ""] and differences(block, printed) == []
    assert differences(block, ["a\nb", ""])  # a different output is reported


@pytest.mark.slow  # the shipped checkpoint, once per `entqa link`
@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_console_example_prints_what_it_shows(document: str) -> None:
    reports = []
    with scratch_folder() as folder:
        for block in console_blocks(REPOSITORY / document):
            reports += differences(block, run_block(block, Path(folder)))
    assert not reports, "\n\n".join(reports)
