"""The service's metrics in Prometheus's text format (`GET /metrics`): requests by route and status and their
seconds, documents and characters the model linked, the seconds of its passes and of each stage of the linker, the
documents waiting, and the process's resident memory. Under gunicorn with several workers each writes its own files
to `$PROMETHEUS_MULTIPROC_DIR` (set by `gunicorn.conf.py`) and a scrape sums them (prometheus_client's multiprocess
mode)."""
from __future__ import annotations

import os
import resource
import time

from flask import Blueprint, Flask, Response, g, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import REGISTRY, multiprocess

from annotator.runtime import stage_times
from annotator.service.loading import LinkerNotReady, served_loader

REQUESTS = Counter("entqa_requests", "Requests answered, by route and HTTP status", ["route", "status"])
REQUEST_SECONDS = Histogram("entqa_request_seconds", "Seconds from a request's arrival to its answer, by route",
                            ["route"], buckets=(0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600))
DOCUMENTS = Counter("entqa_documents_linked", "Documents the model linked")
CHARACTERS = Counter("entqa_characters_linked", "Characters of text the model linked")
PASS_SECONDS = Histogram("entqa_pass_seconds", "Seconds of one pass of the model thread over the documents it took",
                         buckets=(0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300))
STAGE_SECONDS = Histogram("entqa_stage_seconds", "Seconds of one stage of the linker over one pass's documents, by "
                          "stage (retrieval, reading, decoding, then each later stage by its class)", ["stage"],
                          buckets=(0.001, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60))
WAITING = Gauge("entqa_queue_documents", "Documents waiting for the model", multiprocess_mode="livesum")
MEMORY = Gauge("entqa_max_resident_memory_bytes", "The process's peak resident memory", multiprocess_mode="liveall")

bp = Blueprint("metrics", __name__)


def _stage_finished(stage: str, seconds: float) -> None:
    STAGE_SECONDS.labels(stage).observe(seconds)


def linked(documents: int, characters: int, seconds: float) -> None:
    """Counts one pass of the model thread (`ThreadBoundLinker`'s `on_pass`)."""
    DOCUMENTS.inc(documents)
    CHARACTERS.inc(characters)
    PASS_SECONDS.observe(seconds)


def register_metrics(app: Flask) -> None:
    """Counts every request of `app`, times the linker's stages, and serves `/metrics`."""
    stage_times.listen(_stage_finished)

    @app.before_request
    def start_clock() -> None:
        g.metrics_started = time.monotonic()

    @app.after_request
    def count(response: Response) -> Response:
        route = request.url_rule.rule if request.url_rule is not None else "unmatched"
        REQUESTS.labels(route, str(response.status_code)).inc()
        REQUEST_SECONDS.labels(route).observe(time.monotonic() - g.get("metrics_started", time.monotonic()))
        return response

    app.register_blueprint(bp)


@bp.get("/metrics")
def metrics() -> Response:
    """Every metric of this process, or of all workers in multiprocess mode, in Prometheus's text format."""
    try:
        WAITING.set(served_loader().linker().waiting())
    except LinkerNotReady:
        WAITING.set(0)
    MEMORY.set(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    if "PROMETHEUS_MULTIPROC_DIR" in os.environ:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    return Response(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
