"""The web page at GET /: paste a text, link it through the JSON API, see its mentions as Wikipedia links.

The page is annotator/service/templates/link.html with annotator/service/static/link.js and link.css, served by this
app (no build step, nothing fetched from elsewhere).
"""
from __future__ import annotations

from flask import Blueprint, render_template

bp = Blueprint("page", __name__)


@bp.get("/")
def link_page() -> str:
    """The linking page (POST / stays the NIF endpoint)."""
    return render_template("link.html")
