"""A WSGI app serving TableFileLinker over the JSON table at $TABLE_LINKER_PATH, for gunicorn tests of KB reloads."""
from __future__ import annotations

import os
from pathlib import Path

from tests.support.table_file_linker import TableFileLinker
from annotator.service import create_app

app = create_app(linker=TableFileLinker(Path(os.environ["TABLE_LINKER_PATH"])))
