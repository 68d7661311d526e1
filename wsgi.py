"""The WSGI entry point: `gunicorn wsgi:app` serves the EntQA linker configured by ENTQA_* variables."""
from annotator.service import create_app

app = create_app()
