"""The JSON API: POST /api/link (one document), POST /api/link/batch (several), and /openapi.json describing them and
annotator.service.admin's POST /api/kb/reload.

Requests are validated with the pydantic models of annotator.service.api_schema; spectree writes the OpenAPI 3
description from the same models and routes.
"""
from __future__ import annotations

from typing import TypeVar

from flask import Blueprint, Response, current_app, jsonify, request
from pydantic import BaseModel, ValidationError
from spectree import Response as Answers
from spectree import SecurityScheme, SecuritySchemeData, SpecTree
from spectree.models import SecureType

from annotator.data_types import Mention
from annotator.uris import wikipedia_url
from annotator.service.api_schema import (ApiError, BatchLinkRequest, BatchLinkResponse, DocumentError, LinkedMention,
                                          LinkRequest, LinkResponse)
from annotator.service.errors import RequestError, UnsupportedContentType, failure
from annotator.service.loading import link_each_for_request, link_for_request, served_loader
from annotator.service.request_limits import check_batch_size, check_document_length, read_body

bp = Blueprint("api", __name__)

ADMIN_TOKEN_SCHEME = "adminToken"

# Not registered on the app (spectree's documentation pages load scripts from a CDN): /openapi.json below serves
# its description, generated from the current app's routes.
api_spec = SpecTree("flask", mode="strict", title="EntQA entity linker",
                    version="1", description="Entity linking of plain text; offsets count Unicode code points.",
                    naming_strategy=lambda model: model.__name__,
                    # the administrator's routes (annotator.service.admin): Authorization: Bearer <ENTQA_ADMIN_TOKEN>
                    security_schemes=[SecurityScheme(name=ADMIN_TOKEN_SCHEME,
                                                     data=SecuritySchemeData(
                                                         type=SecureType.HTTP, scheme="bearer",
                                                         description="the service's ENTQA_ADMIN_TOKEN"))])

ModelT = TypeVar("ModelT", bound=BaseModel)

_FAILURES = {f"HTTP_{status}": ApiError for status in (400, 408, 413, 415, 503)}
# skip_validation: spectree only describes the routes; _request_body validates, once annotator.service.request_limits
# has read the body within its bounds (spectree would read it through Flask, without the body timeout).


@bp.post("/api/link")
@api_spec.validate(json=LinkRequest, resp=Answers(HTTP_200=LinkResponse, **_FAILURES), skip_validation=True)
def link() -> Response:
    """Links the mentions of one text (A2KB), or the given spans of it (D2KB)."""
    document = _request_body(LinkRequest)
    check_document_length(document.text, current_app.config["MAX_DOCUMENT_CHARS"])
    return _json(_response(link_for_request(document.text, document.spans)))


@bp.post("/api/link/batch")
@api_spec.validate(json=BatchLinkRequest, resp=Answers(HTTP_200=BatchLinkResponse, **_FAILURES),
                   skip_validation=True)
def link_batch() -> Response:
    """Links several texts together, in shared passes of the model, each as /api/link would; answers them in their
    order, a document that is not valid or whose linking failed with the error /api/link would answer for it."""
    batch = _request_body(BatchLinkRequest)
    valid = [document for document in batch.documents if isinstance(document, LinkRequest)]
    check_batch_size(len(batch.documents), sum(len(document.text) for document in valid),
                     max_documents=current_app.config["MAX_DOCUMENTS_PER_REQUEST"],
                     max_chars=current_app.config["MAX_DOCUMENT_CHARS"])
    linked = iter(link_each_for_request([(document.text, document.spans) for document in valid]))  # in order
    return _json(BatchLinkResponse(documents=[
        _answered(_not_valid(document) if isinstance(document, ValidationError) else next(linked))
        for document in batch.documents]))


@bp.get("/openapi.json")
def openapi_description() -> Response:
    """The OpenAPI 3 description of the JSON API."""
    return jsonify(api_spec.spec)


def _request_body(model: type[ModelT]) -> ModelT:
    # The body is read by annotator.service.request_limits (size bound, body timeout) rather than by spectree, then
    # validated here.
    if request.mimetype != "application/json":
        declared = repr(request.content_type) if request.content_type else "none"
        raise UnsupportedContentType(f"unsupported content type {declared}; expected application/json")
    body = read_body(request, idle_timeout_s=current_app.config["BODY_TIMEOUT"])
    try:
        return model.model_validate_json(body)
    except ValidationError as error:
        raise _not_valid(error) from None


def _not_valid(error: ValidationError) -> RequestError:
    return RequestError(f"bad request: {_reasons(error)}")


def _json(answer: BaseModel) -> Response:
    # The models' field order (start, end, surface, ...), where jsonify would sort the keys.
    return Response(answer.model_dump_json(), mimetype="application/json")


def _reasons(error: ValidationError) -> str:
    reasons = []
    for problem in error.errors(include_url=False):
        where = ".".join(map(str, problem["loc"]))
        # Our own checks (LinkRequest's validator) say what is wrong already; pydantic prefixes "Value error, ".
        what = str(problem["ctx"]["error"]) if problem["type"] == "value_error" else problem["msg"]
        reasons.append(f"{where}: {what}" if where else what)
    return "; ".join(reasons)


def _answered(answer: list[Mention] | BaseException) -> LinkResponse | DocumentError:
    if isinstance(answer, BaseException):
        reason, status = failure(answer)
        return DocumentError(error=reason, status=status)
    return _response(answer)


def _response(found: list[Mention]) -> LinkResponse:
    mentions = sorted(found, key=lambda m: (m.start, m.end, -m.score))
    threshold = served_loader().linker().describe().get("threshold")
    return LinkResponse(mentions=[_row(mention) for mention in mentions],
                        threshold=float(threshold) if isinstance(threshold, int | float) else None)


def _row(mention: Mention) -> LinkedMention:
    return LinkedMention(start=mention.start, end=mention.end, surface=mention.surface, title=mention.title,
                         uri=mention.uri, wikipedia_url=wikipedia_url(mention.title) if mention.title else None,
                         score=mention.score, description=mention.description)
