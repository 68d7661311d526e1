"""The GPU round's job script calls the project's Python; these run its inline Python here, so that a change to
the code it calls fails on the CPU rather than on a lent GPU."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from annotator.entity_index import cached_index_dir, entity_tower_id
from annotator.model.checkpoint import load_config, load_retriever

REPOSITORY = Path(__file__).resolve().parents[2]
JOB = REPOSITORY / "tools" / "gpu_round" / "job.sh"


def _inline_python(name: str) -> str:
    """The here-document of the job's shell function `name`."""
    found = re.search(rf"^{name}\(\) {{.*?<<'PY'\n(.*?)^PY$", JOB.read_text(encoding="utf-8"), re.S | re.M)
    assert found, f"no inline Python in {name}() of {JOB}"
    return found.group(1)


def test_index_dir_names_the_cache_folder_the_linker_reads(tiny_checkpoint: Path, tiny_kb: Path,
                                                           entqa_cache: Path) -> None:
    printed = subprocess.run([sys.executable, "-", str(tiny_checkpoint), str(tiny_kb)],
                             input=_inline_python("index_dir"), capture_output=True, text=True, check=True,
                             cwd=REPOSITORY).stdout.strip()
    config = load_config(tiny_checkpoint)
    tower = entity_tower_id(load_retriever(tiny_checkpoint, config))
    expected = cached_index_dir(kb_path=tiny_kb, entity_tower_id=tower, config=config)
    assert Path(printed) == expected
