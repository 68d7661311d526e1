"""A WSGI app serving SlowLinker (SLOW_LINKER_SECONDS per document, default 2), for gunicorn tests."""
from __future__ import annotations

import os

from tests.support.slow_linker import SlowLinker
from annotator.service import create_app

app = create_app(linker=SlowLinker(float(os.environ.get("SLOW_LINKER_SECONDS", "2"))))
