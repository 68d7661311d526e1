"""/metrics: Prometheus's text format, which prometheus_client's own parser reads, counting what was served."""
from __future__ import annotations

from flask.testing import FlaskClient
from prometheus_client.parser import text_string_to_metric_families

from tests.support.dictionary_linker import DictionaryLinker
from tests.support.gerbil_requests import HEADERS, gerbil_request
from annotator.service import create_app


def samples(client: FlaskClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(response.get_data(as_text=True))
            for sample in family.samples}


def test_metrics_count_requests_documents_and_characters() -> None:
    client = create_app({"TESTING": True}, linker=DictionaryLinker()).test_client()
    before = samples(client)
    assert client.post("/gerbil", data=gerbil_request("Paris and London"), headers=HEADERS).status_code == 200
    assert client.post("/api/link", json={"text": "Paris"}).status_code == 200
    assert client.post("/api/link", json={"txt": "Paris"}).status_code == 400
    after = samples(client)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert grew("entqa_requests_total", route="/gerbil", status="200") == 1
    assert grew("entqa_requests_total", route="/api/link", status="200") == 1
    assert grew("entqa_requests_total", route="/api/link", status="400") == 1
    assert grew("entqa_request_seconds_count", route="/api/link") == 2
    assert grew("entqa_documents_linked_total") == 2
    assert grew("entqa_characters_linked_total") == len("Paris and London") + len("Paris")
    assert grew("entqa_pass_seconds_count") == 2
    assert after[("entqa_queue_documents", ())] == 0
    assert after[("entqa_max_resident_memory_bytes", ())] > 10 * 2**20


def test_the_linkers_stages_are_timed(tiny_linker) -> None:  # type: ignore[no-untyped-def]
    client = create_app({"TESTING": True}, linker=DictionaryLinker()).test_client()
    before = samples(client)
    tiny_linker.link("Paris is the capital of France.")
    after = samples(client)
    for stage in ("retrieval", "reading", "decoding"):
        key = ("entqa_stage_seconds_count", (("stage", stage),))
        assert after[key] - before.get(key, 0.0) == 1
