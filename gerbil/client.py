"""Annotators as a GERBIL experiment sees them: a NIF web service over HTTP, or a linker called in-process."""
from __future__ import annotations

import enum
import http.client
import logging
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from annotator.linking import EntityLinker
from nif import annotations_from_mentions, parse_document, write_document
from nif.data_types import NifAnnotation, NifDocument

logger = logging.getLogger(__name__)

REQUEST_URI = "http://www.aksw.org/gerbil/NifWebService/request_{n}"
# gerbil.properties: HttpManagement.maxWaitingTime = 600000 ms.
DEFAULT_TIMEOUT_S = 600.0
HEADERS = {
    "Content-Type": "application/x-turtle;charset=UTF-8",
    "Accept": "application/x-turtle",
    "Accept-Charset": "UTF-8",
}


class Task(str, enum.Enum):
    """The GERBIL experiment type."""

    A2KB = "a2kb"
    D2KB = "d2kb"


@dataclass(frozen=True)
class Answer:
    """An annotator's answer to one document.

    Attributes:
        annotations: the annotations returned (empty when the call failed).
        latency_s: wall-clock seconds the call took.
        error: why the call failed, or None.
    """

    annotations: tuple[NifAnnotation, ...]
    latency_s: float
    error: str | None = None


class Annotator(Protocol):
    """What an experiment calls: one document at a time, never raising."""

    def annotate(self, document: NifDocument, *, task: Task) -> Answer:
        """Annotates one gold document reduced to what the task reveals (see `reduce_document`)."""
        ...


def reduce_document(document: NifDocument, *, task: Task, uri: str | None = None) -> NifDocument:
    """What GERBIL sends for a gold document: the text (A2KB) or the text and the gold spans without meanings (D2KB).

    Args:
        document: the gold document.
        task: the experiment type.
        uri: a document URI to use instead of the gold one (GERBIL's `request_<n>`); `#char=0,L` is added.

    Returns:
        The request document; spans are deduplicated and sorted.
    """
    base = (uri or document.uri).split("#", 1)[0]
    spans = sorted({(a.start, a.end) for a in document.annotations}) if task is Task.D2KB else []
    return NifDocument(f"{base}#char=0,{len(document.text)}", document.text,
                       tuple(NifAnnotation(start, end) for start, end in spans))


class HttpAnnotator:
    """A NIF web service called the way GERBIL's `NIFBasedAnnotatorWebservice` calls it."""

    def __init__(self, url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 headers: Mapping[str, str] | None = None) -> None:
        """Args:
            url: the annotator's endpoint.
            timeout_s: how long to wait for one answer.
            headers: extra request headers (GERBIL's `-H name value`).
        """
        self.url = url
        self.timeout_s = timeout_s
        self.headers = {**HEADERS, **(headers or {})}
        self._requests = 0

    def annotate(self, document: NifDocument, *, task: Task) -> Answer:
        """POSTs one document as Turtle and parses the answer's first context with `nif:isString`.

        A failure of any kind (connection, timeout, HTTP status, unparseable answer) is logged and returned
        as an empty answer carrying the error, as GERBIL's `ErrorCountingAnnotatorDecorator` does.
        """
        request = reduce_document(document, task=task, uri=REQUEST_URI.format(n=self._requests))
        self._requests += 1
        body = write_document(request).encode("utf-8")
        started = time.perf_counter()
        try:
            http_request = urllib.request.Request(self.url, data=body, headers=self.headers, method="POST")
            with urllib.request.urlopen(http_request, timeout=self.timeout_s) as response:
                answer = parse_document(response.read())
        # OSError covers URLError/HTTPError and timeouts, ValueError covers NifParseError; a malformed
        # status line raises HTTPException, which is neither.
        except (OSError, ValueError, http.client.HTTPException) as error:
            latency = time.perf_counter() - started
            reason = f"{type(error).__name__}: {error}"
            logger.warning("annotator failed on %s: %s", document.uri, reason)
            return Answer((), latency, reason)
        return Answer(answer.annotations, time.perf_counter() - started)


class InProcessAnnotator:
    """An `EntityLinker` called directly, skipping HTTP and NIF, for fast experiments.

    Its mentions become annotations as the web service's do (`nif.annotations_from_mentions`), so both answer alike.
    """

    def __init__(self, linker: EntityLinker, *, with_confidence: bool = False) -> None:
        """Args:
            linker: the linker.
            with_confidence: pass mention scores on as confidences (this triggers the best-threshold search,
                as `itsrdf:taConfidence` in a service's answer would).
        """
        self.linker = linker
        self.with_confidence = with_confidence

    def annotate(self, document: NifDocument, *, task: Task) -> Answer:
        """Links the document's text (D2KB: at the gold spans); an exception becomes an empty answer."""
        request = reduce_document(document, task=task)
        spans = [(a.start, a.end) for a in request.annotations] if task is Task.D2KB else None
        started = time.perf_counter()
        try:
            mentions = self.linker.link(request.text, spans)
        except Exception as error:  # a failing document must not end the experiment, as in GERBIL
            logger.warning("linker failed on %s: %s", document.uri, error)
            return Answer((), time.perf_counter() - started, f"{type(error).__name__}: {error}")
        latency = time.perf_counter() - started
        annotations = annotations_from_mentions(mentions, spans=spans)
        if not self.with_confidence:
            annotations = tuple(replace(annotation, confidence=None) for annotation in annotations)
        return Answer(annotations, latency)
