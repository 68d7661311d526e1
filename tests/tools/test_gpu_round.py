"""The GPU round's job script calls the project's Python; these run its inline Python here, so that a change to
the code it calls fails on the CPU rather than on a lent GPU."""
from __future__ import annotations

import io
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from annotator import DEFAULT_MODEL_DIR
from annotator.decision.model import reader_identity
from annotator.entity_index import cached_index_dir, entity_tower_id, weights_identity
from annotator.knowledge import cached_knowledge_dir, knowledge_identity
from annotator.model.checkpoint import load_config, load_retriever
from annotator.pipeline.mention_table import MentionTable
from nif.data_types import NifAnnotation, NifDocument
from nif.write import write_document

REPOSITORY = Path(__file__).resolve().parents[2]
JOB = REPOSITORY / "tools" / "gpu_round" / "job.sh"


def _inline_python(name: str) -> str:
    """The here-document of the job's shell function `name`."""
    found = re.search(rf"^{name}\(\) {{.*?<<'PY'\n(.*?)^PY$", JOB.read_text(encoding="utf-8"), re.S | re.M)
    assert found, f"no inline Python in {name}() of {JOB}"
    return found.group(1)


def test_index_dir_names_the_cache_folder_the_linker_reads(tiny_checkpoint: Path, tiny_kb: Path, entqa_cache: Path,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    # Run in this process as a script, as `python -` runs it: a fresh interpreter spends seconds importing torch.
    # The slow tests run it from job.sh itself (retriever-mix, decide).
    script = tmp_path / "index_dir.py"
    script.write_text(_inline_python("index_dir"), encoding="utf-8")
    monkeypatch.setattr(sys, "argv", [str(script), str(tiny_checkpoint), str(tiny_kb)])
    runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out.strip()
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


@pytest.mark.slow
def test_decision_round_reads_each_fold_with_the_reader_trained_without_it(tiny_kb: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The learned decision's stages on a kit laid out as pack.sh lays it out, with the shipped checkpoint (the fold
    readers start from its base encoder) and the tiny KB: two fold readers, each with the mention table of the
    documents it was trained on, then the decision trained on the corpus read by them, brought back as decision.tar."""
    kit = tmp_path / "kit"
    shutil.copytree(DEFAULT_MODEL_DIR, kit / "checkpoint", ignore=lambda folder, names: [
        name for name in names if Path(folder) == DEFAULT_MODEL_DIR and name in ("index", "kb")])
    (kit / "data").mkdir(parents=True)
    texts = ["Paris is on the Seine.", "Berlin is in Germany.", "Ada Lovelace was in Paris.", "Zürich and Berlin."]
    corpus = "".join(write_document(NifDocument(
        f"http://example.org/d{i}#char=0,{len(text)}", text,
        tuple(NifAnnotation(text.index(title), text.index(title) + len(title),
                            (f"http://dbpedia.org/resource/{title.replace(' ', '_')}",))
              for title in ("Paris", "Berlin", "Germany", "Ada Lovelace", "Zürich") if title in text)))
        for i, text in enumerate(texts))
    for name in ("train.ttl", "dev.ttl"):
        (kit / "data" / name).write_text(corpus, encoding="utf-8")
    shutil.copy(tiny_kb, kit / "data" / "entities.jsonl")
    out = tmp_path / "out"
    environment = {**os.environ, "KIT": str(kit), "OUT": str(out), "PYTHON": sys.executable, "FOLD_EPOCHS": "1",
                   "FOLD_EXTRA": "--batch-size 2 --candidates 3 --eval-top-k 3 --eval-kb-size 3 "
                                 "--dev-docs 1 --threads 1"}
    run = subprocess.run(["bash", str(JOB), "index", "folds", "decide"], env=environment, cwd=REPOSITORY,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]

    # each fold's own table: counted without its documents (fold 1: the first two, fold 2: the last two)
    for k, (kept, left_out) in {1: ("Ada Lovelace", "Germany"), 2: ("Germany", "Ada Lovelace")}.items():
        names = MentionTable.load(kit / f"fold-{k}" / "mentions.tsv").entities
        assert kept in names and left_out not in names
    # the knowledge tables of the shipped table and of each fold's (the fold readers' name test), built in folds
    monkeypatch.setenv("ENTQA_CACHE", str(kit / "cache"))
    for table in (kit / "checkpoint", kit / "fold-1-table", kit / "fold-2-table"):
        identity = knowledge_identity(kb_path=kit / "data" / "entities.jsonl", mention_table=table / "mentions.tsv")
        assert (cached_knowledge_dir(identity) / "manifest.json").is_file()
    for k in (1, 2):
        config = json.loads((kit / f"fold-{k}" / "reader_training_config.json").read_text())
        assert config["argv"][config["argv"].index("--leave-out-fold") + 1] == f"{k}/2"
        assert "--init-reader" not in config["argv"]  # from the base encoder: the shipped reader saw every fold
        assert (out / f"fold_{k}_metrics.jsonl").read_text().strip()
    with tarfile.open(out / "decision.tar") as tar:
        manifest = json.load(tar.extractfile("decision/manifest.json"))
        assert {"decision/model.txt", "decision/training.log"} <= set(tar.getnames())
    trained_on = manifest["trained_on"]
    assert trained_on["reader"] == reader_identity(kit / "checkpoint")  # applied to the shipped reader's scores
    assert trained_on["read_by"] == [reader_identity(kit / f"fold-{k}") for k in (1, 2)]
    assert set(trained_on["reader_agreement"]) == {"gold_among_candidates", "reader_right", "nil_with_gold_among"}
    readings = sorted(path.name for path in (kit / "fold-readings").iterdir())
    assert readings == [f"train-4-fold{k}of2-{task}.pkl" for k in (1, 2) for task in ("found", "given")]
