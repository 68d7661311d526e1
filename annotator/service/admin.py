"""The administrator's JSON route: POST /api/kb/reload, off unless ENTQA_ADMIN_TOKEN is set, then only with it."""
from __future__ import annotations

import hmac
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from spectree import Response as Answers

from annotator.service.api import ADMIN_TOKEN_SCHEME, api_spec
from annotator.service.api_schema import ApiError, KbReloadResponse
from annotator.service.errors import RequestError
from annotator.service.loading import served_loader
from annotator.service.reloading import reload_linker, signal_other_workers

bp = Blueprint("admin", __name__)


class AdminOff(RequestError):
    """No admin token is configured: the administrator's routes are off."""

    status_code = 404


class TokenMissing(RequestError):
    """The request carries no bearer token."""

    status_code = 401
    headers = MappingProxyType({"WWW-Authenticate": 'Bearer realm="entqa admin"'})


class TokenWrong(RequestError):
    """The request's bearer token is not the configured one."""

    status_code = 403


def check_admin_token(config: Mapping[str, Any]) -> None:
    """Checks the app's ADMIN_TOKEN (None or "": the administrator's routes are off).

    Raises:
        ValueError: ADMIN_TOKEN is not text (ENTQA_ variables are read as JSON where they are: 12345 is a number), or
            holds white space, which a bearer token cannot.
    """
    token = config["ADMIN_TOKEN"]
    if token is not None and not isinstance(token, str):
        raise ValueError(f"ENTQA_ADMIN_TOKEN reads as JSON {type(token).__name__}, not text; use a random token such "
                         "as python -c 'import secrets; print(secrets.token_urlsafe(32))' prints")
    if token and any(character.isspace() for character in token):
        raise ValueError("ENTQA_ADMIN_TOKEN holds white space, which a bearer token cannot")


@bp.post("/api/kb/reload")
@api_spec.validate(resp=Answers(HTTP_200=KbReloadResponse,
                                **{f"HTTP_{status}": ApiError for status in (401, 403, 404, 500, 501, 503)}),
                   security={ADMIN_TOKEN_SCHEME: []}, skip_validation=True)
def reload_kb() -> Response:
    """Serves the KB as it is now on disk (`entqa kb add`'s changes), without a restart; documents go on being
    linked meanwhile.

    Off (404) unless ENTQA_ADMIN_TOKEN is set; then it needs `Authorization: Bearer <token>` (401 without, 403 with
    another). Under gunicorn the worker that answers reloads, then has the master send SIGHUP to every worker. 500:
    the KB could not be loaded, the previous one is still served; 501: the linker cannot reload; 503: it is still
    loading.
    """
    _check_token()
    linker = served_loader().linker()
    served, seconds = reload_linker(linker, cause="POST /api/kb/reload")
    return jsonify(served=served, seconds=round(seconds, 3),
                   other_workers_signalled=signal_other_workers(request.environ))


def _check_token() -> None:
    token: str | None = current_app.config["ADMIN_TOKEN"]
    if not token:
        raise AdminOff("POST /api/kb/reload is off: set ENTQA_ADMIN_TOKEN to turn it on")
    scheme, _, given = request.headers.get("Authorization", "").strip().partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        raise TokenMissing("this route needs the admin token: Authorization: Bearer <ENTQA_ADMIN_TOKEN>")
    # Header values are Latin-1 text under WSGI; in constant time, so that the answer's timing tells nothing.
    if not hmac.compare_digest(given.strip().encode("latin-1", "replace"), token.encode("utf-8")):
        raise TokenWrong("the admin token is wrong")
