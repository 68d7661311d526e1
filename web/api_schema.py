"""The JSON API's request and answer models: pydantic validates requests with them, and spectree writes the OpenAPI
description from the same models (web.api)."""
from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, model_validator

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


class BatchLinkRequest(BaseModel):
    """Several documents, linked one after the other, answered together in their order."""

    model_config = ConfigDict(strict=True, extra="forbid")

    documents: list[LinkRequest] = Field(min_length=1, description="at most ENTQA_MAX_DOCUMENTS_PER_REQUEST "
                                         "documents, of ENTQA_MAX_DOCUMENT_CHARS characters in all")


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
                                                "told); a client may raise the bar from there, never lower it")


class BatchLinkResponse(BaseModel):
    documents: list[LinkResponse] = Field(description="one per requested document, in the same order")


class ApiError(BaseModel):
    error: str = Field(description="why the request was not answered, in one line")
