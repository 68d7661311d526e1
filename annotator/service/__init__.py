"""The Flask application factory of the GERBIL NIF web annotator."""
from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from flask import Flask

from annotator import DEFAULT_MODEL_DIR
from annotator.serving.batching import BatchLimits, QueueLimits
from annotator.serving.linker_thread import ThreadBoundLinker
from annotator.linking import EntityLinker
from annotator.settings import LinkerSettings, settings_from_variables
from annotator.service.admin import bp as admin
from annotator.service.admin import check_admin_token
from annotator.service.api import bp as api
from annotator.service.errors import register_error_handlers
from annotator.service.loading import LinkerLoader
from annotator.service import metrics
from annotator.service.metrics import register_metrics
from annotator.service.page import bp as page
from annotator.service.reloading import reload_on_hangup
from annotator.service.request_ids import register_request_ids
from annotator.service.routes import bp as nif_routes

logger = logging.getLogger(__name__)

# The development KB beside a checkout (../shared/data/kb): served instead of the demo KB when present.
SHARED_KB = Path(__file__).resolve().parents[3] / "shared" / "data" / "kb" / "entities.jsonl.gz"

DEFAULTS: dict[str, Any] = {
    "MODEL_DIR": str(DEFAULT_MODEL_DIR),
    # None: the model folder's demo KB.
    "KB_PATH": str(SHARED_KB) if SHARED_KB.is_file() else None,
    # A prebuilt entity index folder for KB_PATH (else the model's own or the cache's).
    "INDEX_DIR": None,
    # Off by default: with confidences GERBIL tunes the threshold on the test set; without them the
    # reader's fixed threshold γ decides, as in the paper.
    "WITH_CONFIDENCE": False,
    "WIKIPEDIA_URIS": False,
    "MAX_CONTENT_LENGTH": 10 * 1024 * 1024,
    # Characters of text one request may ask to link (null: no limit): 5x AIDA/CoNLL's longest documents (under
    # 10,000), about 260 s of model time on a 2-core CPU (about 5 s per 1,000 characters).
    "MAX_DOCUMENT_CHARS": 50_000,
    # Seconds a document may take, queueing included, before it is dropped with a 503: within GERBIL's 600 s
    # wait, so GERBIL reads the reason, and below gunicorn's 660 s timeout.
    "DOCUMENT_TIMEOUT": 590,
    # Seconds a request body may pause between two of its bytes before a 408 frees the request thread.
    "BODY_TIMEOUT": 30,
    # Documents one JSON API request may hold (/api/link/batch); their characters together stay within
    # MAX_DOCUMENT_CHARS, so a request costs at most the model time of one longest document.
    "MAX_DOCUMENTS_PER_REQUEST": 100,
    # Documents waiting together are linked in one pass (annotator.serving.batching): at most this many (1: batching off),
    "BATCH_DOCUMENTS": 8,
    # of at most this many characters together (null: no bound; a longer document goes alone), as memory and the
    # wait of a batch's shortest document grow with its passages,
    "BATCH_CHARACTERS": 20_000,
    # waiting this long after the first one was queued for others to join it.
    "BATCH_WAIT_MS": 0,
    # Beyond these many documents, or characters of text, waiting for the model, a request gets 503 with Retry-After
    # (null: no bound). An empty queue takes any document, so one client at a time (GERBIL) is never refused;
    # 200 documents hold two full batch requests; 100,000 characters are about 500 s of model time on a 2-core
    # CPU, within DOCUMENT_TIMEOUT.
    "QUEUE_DOCUMENTS": 200,
    "QUEUE_CHARACTERS": 100_000,
    # The administrator's bearer token: POST /api/kb/reload (serve the KB's changes without a restart) is off (404)
    # unless it is set, and then needs it. SIGHUP reloads the KB too, whatever this is.
    "ADMIN_TOKEN": None,
}


def create_app(config: Mapping[str, Any] | None = None, *, linker: EntityLinker | None = None) -> Flask:
    """Builds the application; its linker loads in the background (once per process), /health says when it is in.

    Settings come from `DEFAULTS`, then `ENTQA_*` environment variables (JSON-parsed), then `config`. Besides
    those of `DEFAULTS`, the linker's are any field of the model config (`LinkerConfig`, over the checkpoint's
    config.json) or of the host's settings (`RuntimeSettings`), named in upper case: `TOP_K`, `CPU_PRECISION`.

    Args:
        config: settings that override the defaults and the environment.
        linker: the linker to serve, ready before this returns; when None, the EntQA model in `MODEL_DIR` (with
            the KB at `KB_PATH`, or its own, indexed in `INDEX_DIR` when set) starts loading, and requests get 503
            until it is in. Either runs on a thread of its own, each document within `DOCUMENT_TIMEOUT` seconds.
            SIGHUP (when the app is created on the main thread) and POST /api/kb/reload serve the KB's changes from
            a linker that can reload (`ReloadableLinker`).

    Returns:
        The Flask application.
    """
    app = Flask(__name__)
    app.config.from_mapping(DEFAULTS)
    app.config.from_prefixed_env("ENTQA")
    if config is not None:
        app.config.from_mapping(config)
    # Checked here, so that a setting out of range stops the start rather than the loading.
    check_admin_token(app.config)
    loader = LinkerLoader(partial(_thread_bound_linker, app, linker, _batch_limits(app), _queue_limits(app),
                                  _linker_settings(app)))
    if linker is not None:
        loader.wait()  # nothing to load: served from the first request on
    app.extensions["entqa"] = loader
    reload_on_hangup(loader)  # SIGHUP: serve the KB's changes (reloading.py), when created on the main thread
    register_error_handlers(app)
    register_request_ids(app)
    register_metrics(app)
    app.register_blueprint(nif_routes)
    app.register_blueprint(api)
    app.register_blueprint(admin)
    app.register_blueprint(page)
    return app


def _thread_bound_linker(app: Flask, linker: EntityLinker | None, batch: BatchLimits, queue: QueueLimits,
                         settings: LinkerSettings) -> ThreadBoundLinker:
    # Request threads hand their documents to the one thread that holds the model (see ThreadBoundLinker).
    def build() -> EntityLinker:
        return linker if linker is not None else _load_linker(app, settings)

    return ThreadBoundLinker(build, timeout_s=app.config["DOCUMENT_TIMEOUT"], batch=batch, queue=queue,
                             on_pass=metrics.linked)


def _queue_limits(app: Flask) -> QueueLimits:
    try:
        return QueueLimits(documents=app.config["QUEUE_DOCUMENTS"], characters=app.config["QUEUE_CHARACTERS"])
    except ValueError as error:
        raise ValueError(f"{error} (ENTQA_QUEUE_DOCUMENTS, ENTQA_QUEUE_CHARACTERS)") from error


def _batch_limits(app: Flask) -> BatchLimits:
    try:
        return BatchLimits(documents=app.config["BATCH_DOCUMENTS"], characters=app.config["BATCH_CHARACTERS"],
                           wait_ms=app.config["BATCH_WAIT_MS"])
    except ValueError as error:
        raise ValueError(f"{error} (ENTQA_BATCH_DOCUMENTS, ENTQA_BATCH_CHARACTERS, ENTQA_BATCH_WAIT_MS)") from error


def _linker_settings(app: Flask) -> LinkerSettings:
    # The model's and the host's settings among the app's (ENTQA_TOP_K is TOP_K there); errors name the variable.
    return settings_from_variables({f"ENTQA_{name}": value for name, value in app.config.items()})


def _load_linker(app: Flask, settings: LinkerSettings) -> EntityLinker:
    # Imported here so that the web layer and its tests run without torch when a linker is injected.
    from annotator.pipeline.linker import Linker

    logger.info("loading the linker from %s (KB: %s); /health answers 503 until it is in",
                app.config["MODEL_DIR"], app.config["KB_PATH"] or "the model's demo KB")
    return Linker.from_pretrained(app.config["MODEL_DIR"], kb_path=app.config["KB_PATH"],
                                  index_dir=app.config["INDEX_DIR"], config_overrides=settings.model,
                                  runtime=settings.runtime)
