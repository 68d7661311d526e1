"""`entqa link --ray` on a local Ray with two CPU actors and the shipped KB: the same links as `entqa link` in
process, every row once after an actor is killed mid-run, and a resumed run linking only what is not written."""
from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from annotator.cli import command as cli

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray", reason='Ray is not installed: pip install -e ".[ray]" to run the --ray tests')
psutil = pytest.importorskip("psutil")  # installed with ray

REPO = Path(__file__).resolve().parents[2]
DEMO_KB = REPO / "models" / "entqa-minilm" / "kb" / "entities.jsonl.gz"
# Made-up news sentences; with batch size 4 the twelve documents make three blocks, the in-process batches.
PEOPLE = ["Bill Clinton", "Nelson Mandela", "Angela Merkel", "Barack Obama"]
PLACES = ["Pretoria", "Paris", "Berlin", "Tokyo"]
A2KB = [{"id": f"a{i}", "text": f"{PEOPLE[i % 4]} met reporters in {PLACES[(i + 1) % 4]} on Monday. "
                                f"{PEOPLE[(i + 2) % 4]} spoke later in {PLACES[i % 4]}."} for i in range(8)]
D2KB = [{"id": f"d{i}", "text": f"{PEOPLE[i]} visited {PLACES[i]}.",
         "spans": [[0, len(PEOPLE[i])], [len(PEOPLE[i]) + 9, len(PEOPLE[i]) + 9 + len(PLACES[i])]]} for i in range(4)]
DOCUMENTS = A2KB + D2KB
BATCH = "4"


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray of two CPUs for the module, so that each test starts only its actors."""
    ray.init(num_cpus=2, log_to_driver=False, include_dashboard=False)
    yield
    ray.shutdown()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(document) + "\n" for document in DOCUMENTS), encoding="utf-8")
    return path


def _link_with_ray(corpus: Path, output: Path, batch_size: str = BATCH) -> int:
    return cli.main(["link", "--ray", "--actors", "2", "--batch-size", batch_size, "--kb", str(DEMO_KB), str(corpus),
                     "--output", str(output)])


def part_rows(output: Path) -> list[dict[str, object]]:
    return [json.loads(line) for path in sorted(output.glob("part-*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()]


def links(mentions: list[dict[str, object]]) -> list[tuple[object, ...]]:
    # int8 scales activations per batch: scores may move in the last digits, links must not
    return sorted((m["start"], m["end"], m["uri"]) for m in mentions)


def test_ray_links_as_entqa_link_in_process(local_ray: None, corpus: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["link", "--format", "jsonl", "--batch-size", BATCH, "--kb", str(DEMO_KB), str(corpus)]) == 0
    in_process = {record["id"]: links(record["mentions"])
                  for record in map(json.loads, capsys.readouterr().out.splitlines())}

    assert _link_with_ray(corpus, tmp_path / "out") == 0
    rows = part_rows(tmp_path / "out")
    assert sorted(row["id"] for row in rows) == sorted(document["id"] for document in DOCUMENTS)
    assert {row["id"]: links(row["mentions"]) for row in rows} == in_process
    assert all(in_process[document["id"]] for document in DOCUMENTS)  # something was linked in every document
    assert {row["id"]: (row["text"], row["spans"]) for row in rows} == {
        document["id"]: (document["text"], document.get("spans")) for document in DOCUMENTS}
    assert "linked 12 of 12 documents" in capsys.readouterr().err


def test_a_killed_actor_is_replaced_and_every_row_is_written_once(local_ray: None, corpus: Path,
                                                                  tmp_path: Path) -> None:
    output = tmp_path / "out"
    statuses: list[int] = []
    # One document per block: after the first is written the run goes on for eleven more, time enough to find and
    # kill an actor on a loaded machine (with three blocks the actors could finish first).
    run = threading.Thread(target=lambda: statuses.append(_link_with_ray(corpus, output, batch_size="1")))
    run.start()
    killed = None
    deadline = time.monotonic() + 600
    while killed is None and run.is_alive() and time.monotonic() < deadline:
        # once the first block is written both actors are loaded and linking: kill one in the middle of the run
        if any(output.glob("part-*.jsonl")):
            actors = [process for process in psutil.process_iter(["pid", "cmdline"])
                      if "LinkerActor" in " ".join(process.info["cmdline"] or [])]
            if actors:
                killed = actors[0].info["pid"]
                os.kill(killed, signal.SIGKILL)
        time.sleep(0.2)
    run.join(timeout=900)
    assert killed is not None, "no linker actor was found running to kill"
    assert statuses == [0]
    ids = [row["id"] for row in part_rows(output)]
    assert sorted(ids) == sorted(document["id"] for document in DOCUMENTS)  # all there, none twice


def test_a_run_started_again_links_only_what_is_not_written(local_ray: None, corpus: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "out"
    output.mkdir()
    # What an interrupted run left: one finished part file (a marker link the new run must keep) and one unfinished.
    kept = [{**document, "spans": None, "mentions": [{"start": 0, "end": 1, "surface": "x", "title": "Kept",
                                                     "uri": "http://example.org/kept", "score": 1.0}]}
            for document in A2KB[:4]]
    (output / "part-earlier-00000.jsonl").write_text("".join(json.dumps(row) + "\n" for row in kept))
    (output / "part-earlier-00001.jsonl.tmp").write_text('{"id": "a4", "trunc')

    assert _link_with_ray(corpus, output) == 0
    assert "linked 8 of 12 documents" in capsys.readouterr().err
    rows = part_rows(output)
    assert sorted(row["id"] for row in rows) == sorted(document["id"] for document in DOCUMENTS)
    assert [row for row in rows if row["id"] in {"a0", "a1", "a2", "a3"}] == kept

    assert _link_with_ray(corpus, output) == 0  # nothing left: no actor starts
    assert "linked 0 of 12 documents" in capsys.readouterr().err
    assert len(part_rows(output)) == len(DOCUMENTS)
