"""The `entqa` command: link documents, serve the NIF web annotator, build an index, train, evaluate."""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from tqdm import tqdm

from annotator import DEFAULT_MODEL_DIR
from annotator.data_types import Mention
from annotator.errors import AnnotatorError, ConfigError
from annotator.settings import LinkerSettings, settings_from_variables
from annotator.cli import distributed
from annotator.cli.distributed import RayMissingError
from annotator.cli.documents import INPUT_FORMATS, STDIN, InputDocument, InputError, read_documents
from annotator.cli.formats import OUTPUT_FORMATS

if TYPE_CHECKING:
    from annotator.pipeline.linker import Linker

# The subcommands whose module reads its own command line (`python -m MODULE` is the same command), with the
# summary `entqa --help` shows: listing them must not import torch.
DELEGATED_COMMANDS = {
    "index": ("annotator.entity_index.__main__",
              "build a KB's entity index ahead of time (python -m annotator.entity_index)"),
    "kb": ("annotator.kb.__main__",
           "add, update or remove a KB's entities without rebuilding its index; list or compact the changes "
           "(python -m annotator.kb)"),
    "knowledge": ("annotator.knowledge.__main__",
                  "build a KB's knowledge tables ahead of time: entity graph, prominence, name priors "
                  "(python -m annotator.knowledge)"),
    "train": ("annotator.cli.train", "train the retriever or the reader (python -m annotator.cli.train)"),
    "train-decision": ("annotator.decision.training",
                       "train the learned decision on a corpus the linker reads (python -m annotator.decision.training)"),
    "evaluate": ("gerbil.run", "replay GERBIL A2KB/D2KB experiments on datasets (python -m gerbil.run)"),
}
# gunicorn's settings, shipped inside this package (a link to the checkout's top-level gunicorn.conf.py).
GUNICORN_CONFIG = Path(__file__).resolve().parent / "gunicorn.conf.py"
# The settings the service reads (annotator.service.create_app: ENTQA_ + its setting name; the linker's:
# annotator.settings).
MODEL_DIR_ENV, KB_PATH_ENV, INDEX_DIR_ENV = "ENTQA_MODEL_DIR", "ENTQA_KB_PATH", "ENTQA_INDEX_DIR"
BIND_ENV, WORKERS_ENV = "ENTQA_BIND", "ENTQA_WORKERS"


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one subcommand of `entqa`; returns its exit status."""
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if args.command in DELEGATED_COMMANDS:
        module, _ = DELEGATED_COMMANDS[args.command]
        status: int = importlib.import_module(module).main(rest, prog=f"{parser.prog} {args.command}")
        return status
    if rest:
        args.command_parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        return args.run(args)
    except (InputError, AnnotatorError, ConfigError, RayMissingError) as error:
        print(f"{parser.prog} {args.command}: error: {error}", file=sys.stderr)
        return 2 if isinstance(error, InputError | RayMissingError) else 1


def build_parser() -> argparse.ArgumentParser:
    """The `entqa` parser; the delegated subcommands take any arguments, which their own modules read."""
    parser = argparse.ArgumentParser(prog="entqa", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    link = commands.add_parser(
        "link", help="link the entities of text files or JSON lines", description=(
            "Link the entities of each document and print them. A FILE is a whole plain-text document (its id: the "
            "path), '-' standard input, or, ending in .jsonl, one JSON object per line: "
            '{"id": ..., "text": ..., "spans": [[start, end], ...]}, where spans (optional) asks to link exactly '
            "those character spans (D2KB), else mentions are found end to end (A2KB). Offsets count code points."))
    link.add_argument("inputs", nargs="+", metavar="FILE", help=f"a text or .jsonl file, or {STDIN} for standard input")
    link.add_argument("--input-format", choices=INPUT_FORMATS, default="auto",
                      help="auto: .jsonl files are JSON lines, everything else plain text (default: auto)")
    link.add_argument("--format", choices=sorted({*OUTPUT_FORMATS, *distributed.OUTPUT_FORMATS}),
                      help="tsv: one mention a row; json/jsonl: per document {id, mentions}; nif: NIF 2.0 Turtle "
                           "with scores as itsrdf:taConfidence (default: tsv); with --ray the part files' format, "
                           "jsonl or parquet (default: jsonl)")
    link.add_argument("--batch-size", type=_positive_int, default=16,
                      help="documents linked together, sharing retrieval and reader batches; with --ray also the "
                           "documents of one part file (default: 16)")
    link.add_argument("--device", help="cpu, cuda, cuda:1 (default: CUDA when present)")
    _add_model_arguments(link)
    ray = link.add_argument_group(
        "distributed (--ray)", "Link a corpus on a pool of Ray actors (pip install \".[ray]\"): FILEs are JSON lines "
        "or .parquet files of {id, text, spans?} with unique ids; each finished block of --batch-size documents "
        "becomes a part file of OUT_DIR with its rows and their mentions; a run started again links only the ids "
        "no part file holds.")
    ray.add_argument("--ray", action="store_true", help="link on Ray Data (a local Ray unless --address/$RAY_ADDRESS)")
    ray.add_argument("--address", help="the Ray cluster to run on (default: $RAY_ADDRESS, else a Ray started here)")
    ray.add_argument("--actors", type=_positive_int, default=2,
                     help="linker actors, each with its own model copy and one GPU where the cluster has GPUs, "
                          "else one CPU (default: 2)")
    ray.add_argument("--output", type=Path, metavar="OUT_DIR", help="the folder of part files (required with --ray)")
    link.set_defaults(run=run_link, command_parser=link)

    serve = commands.add_parser(
        "serve", help="serve the GERBIL NIF web annotator (gunicorn wsgi:app)", description=(
            "Run gunicorn with the project's gunicorn.conf.py and wsgi:app, from any folder. The options set the "
            f"service's environment ({MODEL_DIR_ENV}, {KB_PATH_ENV}, {INDEX_DIR_ENV}, {BIND_ENV}, {WORKERS_ENV}); "
            "every other ENTQA_* setting is read from the environment as the service always does."))
    serve.add_argument("--bind", help=f"address:port to listen on (default: ${BIND_ENV} or 127.0.0.1:8080)")
    serve.add_argument("--workers", type=_positive_int,
                       help=f"worker processes, each with its own model copy (default: ${WORKERS_ENV} or 1)")
    _add_model_arguments(serve)
    serve.set_defaults(run=run_serve, command_parser=serve)

    for name, (_, summary) in DELEGATED_COMMANDS.items():
        # no -h of its own: `entqa NAME --help` reaches the module's parser
        commands.add_parser(name, help=summary, add_help=False)
    return parser


def _add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", type=_existing_path, default=os.environ.get(MODEL_DIR_ENV) or DEFAULT_MODEL_DIR,
                        help=f"checkpoint folder (default: ${MODEL_DIR_ENV} or the shipped {DEFAULT_MODEL_DIR.name})")
    parser.add_argument("--kb", type=_existing_path,
                        help=f"KB file: shared, BLINK or KILT JSON lines (default: ${KB_PATH_ENV}, else the model's "
                             "demo KB; serve: as the service chooses)")
    parser.add_argument("--index-dir", type=_existing_path, default=os.environ.get(INDEX_DIR_ENV),
                        help=f"a prebuilt entity index folder for the KB (default: ${INDEX_DIR_ENV}, else the "
                             "model's own or the cache's)")


def _existing_path(value: str) -> Path:
    # checked here, so that a mistyped path fails at once rather than after the model has loaded
    path = Path(value)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file or folder: {path}")
    return path


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {number}")
    return number


def run_link(args: argparse.Namespace) -> int:
    """`entqa link`: read every input first (a bad one fails before the model loads), link, print."""
    if args.ray:
        return run_distributed_link(args)
    for option in ("address", "output"):
        if getattr(args, option) is not None:
            args.command_parser.error(f"--{option} needs --ray")
    if args.format in set(distributed.OUTPUT_FORMATS) - set(OUTPUT_FORMATS):
        args.command_parser.error(f"--format {args.format} needs --ray; without it: "
                                  f"{', '.join(sorted(OUTPUT_FORMATS))}")
    documents = read_documents(args.inputs, args.input_format)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    kb, settings = args.kb or _env_path(KB_PATH_ENV), settings_from_variables(os.environ)
    started = time.perf_counter()
    # the loading takes seconds to minutes (a KB's index is built on its first use): say so on standard error
    print(f"{args.command_parser.prog}: loading the model {Path(args.model).name} with {kb or 'its demo KB'} ...",
          file=sys.stderr)
    linker = load_linker(args.model, kb_path=kb, index_dir=args.index_dir, device=args.device, settings=settings)
    print(f"{args.command_parser.prog}: loaded in {time.perf_counter() - started:.1f} s "
          f"({linker.describe().get('entities', '?')} entities); linking {len(documents)} document(s)", file=sys.stderr)
    mentions = link_documents(linker, documents, batch_size=args.batch_size)
    sys.stdout.write(OUTPUT_FORMATS[args.format or "tsv"](documents, mentions))
    return 0


def run_distributed_link(args: argparse.Namespace) -> int:
    """`entqa link --ray`: the corpus linked by Ray actors into part files of --output (annotator.cli.distributed)."""
    output_format = args.format or "jsonl"
    if output_format not in distributed.OUTPUT_FORMATS:
        args.command_parser.error(f"with --ray, --format must be one of {', '.join(distributed.OUTPUT_FORMATS)}, "
                                  f"got {output_format}")
    if args.output is None:
        args.command_parser.error("--ray needs --output OUT_DIR, the folder of part files")
    if args.input_format == "text":
        args.command_parser.error("with --ray the inputs are JSON lines or .parquet files (--input-format auto or "
                                  "jsonl)")
    distributed.import_ray()  # says how to install Ray before anything is read
    settings = settings_from_variables(os.environ)
    documents = distributed.read_corpus(args.inputs)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    linked = distributed.link_corpus(
        documents, args.output, model_dir=args.model, kb_path=args.kb or _env_path(KB_PATH_ENV),
        index_dir=args.index_dir, device=args.device, settings=settings, address=args.address, actors=args.actors,
        batch_size=args.batch_size, output_format=output_format)
    print(f"{args.command_parser.prog}: linked {linked} of {len(documents)} documents into {args.output} "
          f"({len(documents) - linked} were there already)", file=sys.stderr)
    return 0


def _env_path(name: str) -> Path | None:
    # read here, as the service reads it (and so that link_corpus hands the actors an absolute path: a relative one
    # would be read from each Ray worker's own folder)
    value = os.environ.get(name)
    return Path(value) if value else None


def load_linker(model_dir: Path, *, kb_path: Path | None, index_dir: Path | None, device: str | None,
                settings: LinkerSettings) -> Linker:
    """The EntQA linker, configured as the service's: the checkpoint's config.json with the `settings` read from
    the ENTQA_* variables (the KB: `kb_path`, else the model's demo KB)."""
    from annotator.pipeline.linker import Linker  # torch and faiss: loaded only once the input has been read

    return Linker.from_pretrained(model_dir, kb_path=kb_path, index_dir=index_dir, device=device,
                                  config_overrides=settings.model, runtime=settings.runtime)


def link_documents(linker: Linker, documents: Sequence[InputDocument], *, batch_size: int) -> list[list[Mention]]:
    """Each document's mentions, `batch_size` documents at a time, with a progress bar over several documents.

    A batch shares the retrieval call and the reader batches (`Linker.link_batch`); documents with given spans (D2KB)
    and without (A2KB) share it alike.
    """
    mentions: list[list[Mention]] = []
    # None: shown where standard error is a terminal
    with tqdm(total=len(documents), unit="doc", disable=None if len(documents) > 1 else True) as progress:
        for first in range(0, len(documents), batch_size):
            batch = documents[first:first + batch_size]
            mentions.extend(linker.link_batch([d.text for d in batch], [d.spans for d in batch]))
            progress.update(len(batch))
    return mentions


def run_serve(args: argparse.Namespace) -> NoReturn:
    """`entqa serve`: becomes gunicorn (same process), so that signals and the exit status are gunicorn's."""
    settings = {MODEL_DIR_ENV: args.model, KB_PATH_ENV: args.kb, INDEX_DIR_ENV: args.index_dir, BIND_ENV: args.bind,
                WORKERS_ENV: args.workers}
    os.environ.update({name: str(value) for name, value in settings.items() if value is not None})
    os.execv(sys.executable, [sys.executable, "-m", "gunicorn", "--config", str(GUNICORN_CONFIG), "wsgi:app"])
