"""The GPU round's job script calls the project's Python; these run its inline Python here, so that a change to
the code it calls fails on the CPU rather than on a lent GPU."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from annotator.entity_index import cached_index_dir, entity_tower_id, weights_identity
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


@pytest.mark.slow
def test_retriever_round_trains_both_towers_and_brings_back_its_recall(tiny_checkpoint: Path, tiny_kb: Path,
                                                                       tmp_path: Path) -> None:
    """The retriever stages on a kit laid out as pack.sh lays it out, with the tiny checkpoint and KB: two epochs,
    each on a new index, then recall.json for both retrievers, the round's retriever in pieces, and a reader round
    on the new retriever's candidates."""
    kit = tmp_path / "kit"
    shutil.copytree(tiny_checkpoint, kit / "checkpoint")
    (kit / "data" / "ood-dev").mkdir(parents=True)
    corpus = REPOSITORY / "tests" / "resources" / "gerbil" / "gerbil_shape.ttl"
    for path in (kit / "data" / "train.ttl", kit / "data" / "dev.ttl", kit / "data" / "ood-dev" / "ace2004.ttl"):
        shutil.copy(corpus, path)
    shutil.copy(tiny_kb, kit / "data" / "entities.jsonl")
    out = tmp_path / "out"
    environment = {**os.environ, "KIT": str(kit), "OUT": str(out), "PYTHON": sys.executable, "MIX_PASSAGES": "2",
                   "RECALL_SETS": "ace2004", "RETRIEVER_LR": "1e-2", "FETCH": "retriever-mix",
                   "RETRIEVER_EXTRA": "--batch-size 1 --negatives 3 --eval-competitors 1 --eval-kb-size 3 --threads 1",
                   "READER_RETRIEVER": str(kit / "retriever-mix-round"), "READER_EPOCHS": "1",
                   "READER_EXTRA": "--max-entity-len 24 --batch-size 2 --candidates 3 --eval-top-k 3 --eval-kb-size 3 --threads 1"}
    subprocess.run(["bash", str(JOB), "retriever-mix", "recall", "fetch", "reader-mix"], env=environment,
                   cwd=REPOSITORY, check=True, capture_output=True)

    epochs = [json.loads(line) for line in (out / "retriever_mix_metrics.jsonl").read_text().splitlines()]
    assert len(epochs) == 2 and all("passage_R@100" in epoch for epoch in epochs)
    round_dir = (kit / "retriever-mix-round").resolve()
    assert round_dir.name == "retriever-mix-epoch-2"
    recall = json.loads((out / "recall.json").read_text())
    assert set(recall) == {"shipped", "retriever-mix"}
    assert all([Path(d["dataset"]).name for d in figures["datasets"]] == ["dev.ttl", "ace2004.ttl"]
               for figures in recall.values())
    assert {path.name for path in out.glob("retriever-mix.tar.*")} >= {"retriever-mix.tar.part-0",
                                                                      "retriever-mix.tar.sha256"}
    archive = b"".join(path.read_bytes() for path in sorted(out.glob("retriever-mix.tar.part-*")))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        names = tar.getnames()
    assert "retriever" in {name.split("/")[0] for name in names} and "config.json" in names
    trained = load_retriever(round_dir, load_config(round_dir))
    shipped = load_retriever(kit / "checkpoint", load_config(kit / "checkpoint"))
    assert weights_identity(trained.entity_tower) != weights_identity(shipped.entity_tower)
    assert weights_identity(trained.passage_encoder) != weights_identity(shipped.passage_encoder)
    mix_config = json.loads((kit / "reader-mix-round" / "reader_training_config.json").read_text())
    assert mix_config["argv"][mix_config["argv"].index("--retriever") + 1] == str(kit / "retriever-mix-round")
    assert (out / "reader_mix_metrics.jsonl").read_text().strip()
