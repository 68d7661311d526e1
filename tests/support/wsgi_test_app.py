"""A WSGI app serving DictionaryLinker, for running the real gunicorn in tests."""
from __future__ import annotations

from tests.support.dictionary_linker import DictionaryLinker
from annotator.service import create_app

app = create_app(linker=DictionaryLinker())
