"""The console examples of the README and the docs, run: each ```console block's `$` commands, in order, in a scratch
folder that links the checkout's models/ and examples/, with what they print compared to what the block shows.

    python -m tools.console_examples README.md docs/command-line.md docs/own-entities.md            # check
    python -m tools.console_examples --update README.md docs/command-line.md docs/own-entities.md   # rewrite

A `cat FILE` of a file the scratch folder lacks writes FILE from what the block shows (the example's input). A
command's standard output is what counts, and its standard error too when it fails; times ("in 1.6 s") are not
compared. Blocks that talk to a running service (`curl`) are left out. The models compute in int8
(ENTQA_CPU_PRECISION), as the slow tier's pins do, so the figures are those of any CPU with int8 support.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
_PROMPT = "$ "
_TIMES = re.compile(r"\b\d+(\.\d+)? s\b")


@dataclass(frozen=True)
class Step:
    """One `$` command of a block and the lines the block shows after it."""

    command: str
    shown: str


@dataclass(frozen=True)
class Block:
    """A ```console block: its lines in the file (after the opening fence, up to the closing one) and its steps."""

    path: Path
    first: int
    last: int
    steps: tuple[Step, ...]


def console_blocks(path: Path) -> list[Block]:
    """The ```console blocks of a Markdown file that run without a service."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks, opened = [], None
    for number, line in enumerate(lines):
        if opened is None and line.strip() == "```console":
            opened = number + 1
        elif opened is not None and line.strip() == "```":
            body = lines[opened:number]
            if not any("curl " in row for row in body):
                blocks.append(Block(path, opened, number, tuple(_steps(body))))
            opened = None
    return blocks


def _steps(body: list[str]) -> list[Step]:
    steps: list[Step] = []
    command, shown = None, []
    for row in body:
        if row.startswith(_PROMPT) and not (command or "").endswith("\\"):
            if command is not None:
                steps.append(Step(command, "\n".join(shown)))
            command, shown = row[len(_PROMPT):], []
        elif command is not None and command.endswith("\\"):
            command += "\n" + row
        else:
            shown.append(row)
    if command is not None:
        steps.append(Step(command, "\n".join(shown)))
    return steps


def run_block(block: Block, folder: Path) -> list[str]:
    """What each step of the block prints, run in `folder` (which the steps may leave files in)."""
    env = {**os.environ, "ENTQA_CPU_PRECISION": "int8", "ENTQA_CACHE": str(folder / ".cache"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for name in ("ENTQA_KB_PATH", "ENTQA_MODEL_DIR", "ENTQA_INDEX_DIR"):
        env.pop(name, None)
    printed = []
    for step in block.steps:
        cat = re.fullmatch(r"cat (\S+)", step.command)
        if cat and not (folder / cat.group(1)).exists():
            (folder / cat.group(1)).write_text(step.shown + "\n", encoding="utf-8")
        done = subprocess.run(["bash", "-c", step.command], cwd=folder, env=env, capture_output=True, text=True,
                              check=False)
        printed.append((done.stdout + (done.stderr if done.returncode else "")).rstrip("\n"))
    return printed


def differences(block: Block, printed: list[str]) -> list[str]:
    """The steps whose printed output is not what the block shows (times aside), each as a short report."""
    return [f"{block.path}:{block.first}: `{step.command}` printed\n{output}\ninstead of\n{step.shown}"
            for step, output in zip(block.steps, printed)
            if _TIMES.sub("N s", output) != _TIMES.sub("N s", step.shown)]


def scratch_folder() -> tempfile.TemporaryDirectory[str]:
    """A folder with links to the checkout's models/ and examples/, where the examples run."""
    folder = tempfile.TemporaryDirectory(prefix="console-examples-")
    for name in ("models", "examples"):
        os.symlink(REPOSITORY / name, Path(folder.name) / name)
    return folder


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--update", action="store_true", help="write what the commands print into the blocks")
    args = parser.parse_args(argv)
    reports = []
    for path in args.files:
        lines = path.read_text(encoding="utf-8").split("\n")
        with scratch_folder() as folder:  # the blocks of a file in order: a later one may use an earlier one's files
            runs = [(block, run_block(block, Path(folder))) for block in console_blocks(path)]
        for block, printed in reversed(runs):  # from the end, so that the earlier blocks' line numbers hold
            reports += differences(block, printed)
            if args.update:
                lines[block.first:block.last] = [row for step, output in zip(block.steps, printed)
                                                 for row in [_PROMPT + step.command, *([output] if output else [])]]
        if args.update:
            path.write_text("\n".join(lines), encoding="utf-8")
    print("\n\n".join(reports) or "every example printed what it shows", file=sys.stderr)
    return 1 if reports and not args.update else 0


if __name__ == "__main__":
    raise SystemExit(main())
