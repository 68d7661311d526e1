"""The JSON API's request and answer models: pydantic validates requests with them, and spectree writes the OpenAPI
description from the same models (annotator.service.api)."""
from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PlainValidator, ValidationError, model_validator

Span = Annotated[tuple[NonNegativeInt, NonNegativeInt],
                 Field(description="[start, end): code-point offsets into the text, start < end")]


class LinkRequest(BaseModel):
    """One document: without `spans` its mentions are found and linked (A2KB); with them exactly those spans are
    linked, each to an entity or to none (D2KB)."""

    # Strict: "3" is not a number here, nor 3.5 an offset; unknown keys are refused rather than ignored.
    model_config = ConfigDict(strict=True, extra="forbid")

    text: str = Field(min_length=1, description="the document, plain text")
    spans: list[Span] | None = Field(default=None, description="the mentions to link (D2KB); absent: find them")

    @model_validator(mode="after")
    def _spans_inside_text(self) -> LinkRequest:
        for start, end in self.spans or ():
            if not start < end <= len(self.text):
                raise ValueError(f"span [{start}, {end}] is empty or outside the text of {len(self.text)} "
                                 f"characters; expected 0 <= start < end <= {len(self.text)}")
        return self


def _document_alone(value: Any) -> LinkRequest | ValidationError:
    """The document as /api/link validates its body, or why it is not valid: one bad document of a batch is
    answered alone."""
    try:
        # From JSON again: strict validation of Python values would refuse the JSON arrays of spans as tuples.
        return LinkRequest.model_validate_json(json.dumps(value))
    except ValidationError as error:
        return error


class BatchLinkRequest(BaseModel):
    """Several documents, linked together (sharing the model's passes), answered together in their order."""

    model_config = ConfigDict(strict=True, extra="forbid")

    documents: list[Annotated[LinkRequest | ValidationError,
                              PlainValidator(_document_alone, json_schema_input_type=LinkRequest)]] = Field(
        min_length=1, description="at most ENTQA_MAX_DOCUMENTS_PER_REQUEST documents, of ENTQA_MAX_DOCUMENT_CHARS "
                                  "characters in all; one that is not valid is answered with its error, alone")


class LinkedMention(BaseModel):
    start: int = Field(description="code-point offset of the mention's first character")
    end: int = Field(description="code-point offset just past the mention")
    surface: str = Field(description="text[start:end]")
    title: str | None = Field(description="the entity's Wikipedia title; null: no entity (a given span only)")
    uri: str = Field(description="the entity's DBpedia IRI, or an emerging-entity IRI when title is null")
    wikipedia_url: str | None = Field(description="the entity's English Wikipedia article")
    score: float = Field(description="the reader's confidence, p_rerank x p_span")
    description: str = Field(description="the start of the entity's KB description")


class LinkResponse(BaseModel):
    mentions: list[LinkedMention] = Field(description="by start offset")
    threshold: float | None = Field(description="the service's gamma: found mentions score above it (null: not "
                                                "told), given spans are linked above it or where their text titles "
                                                "the entity; a client may raise the bar from there, never lower it")


class ApiError(BaseModel):
    error: str = Field(description="why the request was not answered, in one line")


class DocumentError(ApiError):
    """A batch's document that got no mentions: the error /api/link would answer for it alone, and its status."""

    status: int = Field(description="the HTTP status /api/link would answer for this document alone: 400 not valid, "
                                    "503 dropped (past ENTQA_DOCUMENT_TIMEOUT), 500 an internal error")


class BatchLinkResponse(BaseModel):
    documents: list[LinkResponse | DocumentError] = Field(
        description="one per requested document, in the same order: its mentions, or why it got none")


class KbReloadResponse(BaseModel):
    served: dict[str, str | int | float] = Field(
        description="what this worker serves now, as GET /health tells it: the linker's kb, entities, kb_changes (a "
                    "digest of the KB's change set, empty when none), ...")
    seconds: float = Field(description="how long the reload took")
    other_workers_signalled: bool = Field(
        description="true under gunicorn: its master was sent SIGHUP, so that the other workers reload their KB too "
                    "(each logs its outcome)")
