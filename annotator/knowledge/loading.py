"""The knowledge tables of a checkpoint and KB: shipped beside the embedded KB, else read from the cache, where they
are built once."""
from __future__ import annotations

import logging
from pathlib import Path

from annotator.errors import ModelLoadError
from annotator.knowledge.build import build_knowledge, cached_knowledge_dir, knowledge_identity
from annotator.knowledge.tables import MANIFEST, Knowledge
from annotator.model.checkpoint import MENTION_TABLE
from annotator.pipeline.mention_table import MentionTable
from annotator.training.data import load_kb

logger = logging.getLogger(__name__)

SHIPPED = Path("knowledge")  # in a checkpoint folder, the tables of its embedded KB


def load_knowledge(model_dir: Path, kb_path: Path, *, out: Path | None = None) -> tuple[Knowledge, Path]:
    """The tables of `kb_path` with `model_dir`'s training links, and the folder they are in: `out` if given,
    else the checkpoint's shipped tables where they were built from this KB, else the cache; built there when
    missing or built from something else."""
    table = model_dir / MENTION_TABLE
    identity = knowledge_identity(kb_path=kb_path, mention_table=table)
    candidates = [out] if out is not None else [model_dir / SHIPPED, cached_knowledge_dir(identity)]
    for directory in candidates:
        if (directory / MANIFEST).is_file():
            try:
                return Knowledge.load(directory, identity=identity), directory
            except ModelLoadError as error:  # another KB's or an older build: not these
                logger.info("%s", error)
    directory = candidates[-1]
    logger.info("building the knowledge tables of %s into %s (once)", kb_path, directory)
    knowledge = build_knowledge(load_kb(kb_path), MentionTable.load(table) if table.is_file() else None, identity)
    knowledge.save(directory)
    return knowledge, directory
