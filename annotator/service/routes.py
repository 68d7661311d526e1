"""The GERBIL NIF endpoint and the health checks (`/health` with what is served, `/health/live`, `/health/ready`)."""
from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, request

from annotator.data_types import Mention
from annotator.uris import wikipedia_uri
from nif import NifDocument, annotations_from_mentions, parse_document, write_document
from annotator.service.answerable import check_answerable
from annotator.service.errors import UnsupportedContentType
from annotator.service.loading import LinkerNotReady, link_for_request, served_loader
from annotator.service.request_limits import check_document_length, read_body


bp = Blueprint("gerbil", __name__)

TURTLE = "application/x-turtle; charset=utf-8"
# GERBIL sends application/x-turtle; text/turtle is the registered type. A body without a declared
# type (or as bare bytes) is read as Turtle too, since that is all the endpoint speaks; anything
# else (JSON, HTML, forms) is a client mistake and gets 415.
ACCEPTED_TYPES = ("application/x-turtle", "text/turtle", "application/octet-stream", "")


@bp.post("/")
@bp.post("/gerbil")
def annotate() -> Response:
    """Links the entities of one NIF document: A2KB without spans, D2KB with them."""
    _check_content_type()
    doc = parse_document(read_body(request, idle_timeout_s=current_app.config["BODY_TIMEOUT"]))
    check_answerable(doc)
    check_document_length(doc.text, current_app.config["MAX_DOCUMENT_CHARS"])
    spans = [(annotation.start, annotation.end) for annotation in doc.annotations] or None
    mentions = link_for_request(doc.text, spans)
    answer = NifDocument(doc.uri, doc.text, annotations_from_mentions(mentions, spans=spans, uris=_uris))
    body = write_document(answer, with_confidence=current_app.config["WITH_CONFIDENCE"])
    return Response(body, content_type=TURTLE)


@bp.get("/health")
def health() -> Response | tuple[Response, int]:
    """Which model and KB the service serves (200); 503 while they load or when their loading failed."""
    loader = served_loader()
    try:
        description = loader.linker().describe()
    except LinkerNotReady as error:
        return jsonify(status=loader.state, error=str(error)), 503
    return jsonify(status="ok", **description)


@bp.get("/health/live")
def live() -> Response:
    """Liveness: the process answers (200), whether or not its model is in."""
    return jsonify(status="live")


@bp.get("/health/ready")
def ready() -> Response | tuple[Response, int]:
    """Readiness: 200 once the model is in and its queue has room; 503 while it loads, after its loading failed, or
    while the queue is full."""
    loader = served_loader()
    try:
        linker = loader.linker()
    except LinkerNotReady as error:
        return jsonify(status=loader.state, error=str(error)), 503
    if linker.full():
        return jsonify(status="full", error="the queue of documents is full; new ones get 503"), 503
    return jsonify(status="ready")


def _check_content_type() -> None:
    charset = request.mimetype_params.get("charset", "utf-8")
    if request.mimetype not in ACCEPTED_TYPES or charset.lower() not in ("utf-8", "utf8"):
        raise UnsupportedContentType("unsupported content type, expected application/x-turtle or text/turtle in "
                                     f"UTF-8: {request.content_type[:100]!r}")


def _uris(mention: Mention) -> tuple[str, ...]:
    """The mention's DBpedia IRI, and its Wikipedia IRI when the service is configured to give it."""
    if current_app.config["WIKIPEDIA_URIS"] and mention.title is not None:
        return mention.uri, wikipedia_uri(mention.title)
    return (mention.uri,)
