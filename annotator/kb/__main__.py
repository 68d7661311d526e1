"""Command line: add, update and remove a KB's entities without rebuilding its index, list the changes, compact them
into the KB file. A running service picks the changes up on SIGHUP or POST /api/kb/reload."""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from annotator import DEFAULT_MODEL_DIR
from annotator.data_types import Entity
from annotator.errors import AnnotatorError, KBFormatError
from annotator.kb.changes import KBChangeError, KBChanges, changes_path, read_changes, read_entity_file
from annotator.settings import settings_from_variables

# The service's variables, read alike here (annotator.settings names the rest)
MODEL_DIR_ENV, KB_PATH_ENV, INDEX_DIR_ENV = "ENTQA_MODEL_DIR", "ENTQA_KB_PATH", "ENTQA_INDEX_DIR"
_EMBEDDED_KB = Path("kb") / "entities.jsonl.gz"


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m annotator.kb") -> int:
    """Runs one `kb` subcommand; `prog` names the command in help (`entqa kb` runs this)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--model", type=Path, default=os.environ.get(MODEL_DIR_ENV) or DEFAULT_MODEL_DIR,
                        help=f"checkpoint folder (default: ${MODEL_DIR_ENV} or the shipped {DEFAULT_MODEL_DIR.name})")
    parser.add_argument("--kb", type=Path, default=os.environ.get(KB_PATH_ENV),
                        help=f"the KB file to change (default: ${KB_PATH_ENV}, else the model's demo KB); its changes "
                             "are kept beside it in FILE.changes.json")
    parser.add_argument("--index-dir", type=Path, default=os.environ.get(INDEX_DIR_ENV),
                        help=f"the KB file's index folder (default: ${INDEX_DIR_ENV}, else the model's own or the "
                             "cache's, as the linker finds it)")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 (default: CUDA when present)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    entity_file = ('FILE: JSON lines (.jsonl or .jsonl.gz), {"title": ..., "text": ..., "qid": ... (optional)} per '
                   "line, or any KB format `entqa index` reads")
    commands.add_parser("add", help="add entities the KB lacks", description=entity_file).add_argument("file",
                                                                                                        type=Path)
    commands.add_parser("update", help="give entities new descriptions (matched by title, else QID)",
                        description=entity_file).add_argument("file", type=Path)
    remove = commands.add_parser("remove", help="remove entities by title or QID")
    remove.add_argument("keys", nargs="+", metavar="TITLE|QID")
    commands.add_parser("list-changes", help="list the changes made since the KB file was written")
    commands.add_parser("compact", help="write the changes into the KB file and its index (nothing is encoded again)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    kb = args.kb or args.model / _EMBEDDED_KB
    try:
        if not kb.is_file():
            raise KBChangeError(f"KB file {kb} does not exist")
        if args.command == "list-changes":
            print(_listing(kb, read_changes(kb)))
            return 0
        entities = read_entity_file(args.file) if args.command in ("add", "update") else None  # before the model
        return _run(args, kb, entities)
    except (KBChangeError, KBFormatError, AnnotatorError) as error:
        print(f"{prog} {args.command}: error: {error}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, kb: Path, entities: list[Entity] | None) -> int:
    from annotator.kb.editing import KBEditor  # torch: loaded once the input has been read

    started = time.perf_counter()
    editor = KBEditor.open(args.model, kb, index_dir=args.index_dir, device=args.device,
                           runtime=settings_from_variables(os.environ).runtime)
    if args.command == "compact":
        directory = editor.compact()
        print(f"compacted the changes into {kb} and its index {directory} in {time.perf_counter() - started:.1f} s")
        return 0
    change = {"add": editor.add, "update": editor.update, "remove": editor.remove}[args.command]
    changes = change(entities if entities is not None else args.keys)
    count = len(entities) if entities is not None else len(args.keys)
    print(f"{args.command}: {count} entities of {kb} in {time.perf_counter() - started:.1f} s; "
          f"{_summary(changes)}. A running service takes them up on SIGHUP or POST /api/kb/reload.")
    return 0


def _summary(changes: KBChanges) -> str:
    return (f"now {len(changes.entities)} entities added or updated, {len(changes.hidden)} of the file's entries "
            f"removed or replaced (changes {changes.digest or 'none'})")


def _listing(kb: Path, changes: KBChanges) -> str:
    if not changes.log:
        return f"{kb}: no changes"
    lines = [f"{change.at}  {change.action:<6}  {change.title}" for change in changes.log]
    return "\n".join([*lines, f"{kb}: {_summary(changes)} ({changes_path(kb)})"])


if __name__ == "__main__":
    raise SystemExit(main())
