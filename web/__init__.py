"""The Flask application factory of the GERBIL NIF web annotator."""
from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from annotator import DEFAULT_MODEL_DIR
from annotator.linking import EntityLinker
from web.errors import register_error_handlers
from web.routes import bp

logger = logging.getLogger(__name__)

# The development KB beside a checkout (../shared/data/kb): served instead of the demo KB when present.
SHARED_KB = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "kb" / "entities.jsonl.gz"

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
}


def create_app(config: Mapping[str, Any] | None = None, *, linker: EntityLinker | None = None) -> Flask:
    """Builds the application and its linker, loaded once per process.

    Settings come from `DEFAULTS`, then `ENTQA_*` environment variables (JSON-parsed), then `config`.

    Args:
        config: settings that override the defaults and the environment.
        linker: the linker to serve; when None, the EntQA model in `MODEL_DIR` (with the KB at
            `KB_PATH`, or its own, indexed in `INDEX_DIR` when set) is loaded.

    Returns:
        The Flask application.
    """
    app = Flask(__name__)
    app.config.from_mapping(DEFAULTS)
    app.config.from_prefixed_env("ENTQA")
    if config is not None:
        app.config.from_mapping(config)
    app.extensions["entqa"] = linker if linker is not None else _load_linker(app)
    register_error_handlers(app)
    app.register_blueprint(bp)
    return app


def _load_linker(app: Flask) -> EntityLinker:
    # Imported here so that the web layer and its tests run without torch when a linker is injected.
    from annotator.linker_thread import ThreadBoundLinker
    from annotator.pipeline import Linker

    logger.info("loading the linker from %s (KB: %s)", app.config["MODEL_DIR"], app.config["KB_PATH"] or "its own")
    # Request threads hand their documents to the one thread that holds the model (see ThreadBoundLinker).
    return ThreadBoundLinker(lambda: Linker.from_pretrained(app.config["MODEL_DIR"], kb_path=app.config["KB_PATH"],
                                                            index_dir=app.config["INDEX_DIR"]))
