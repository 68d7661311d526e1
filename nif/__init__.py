"""NIF 2.0 documents: their types, a Turtle parser and a Turtle writer."""
from __future__ import annotations

from nif.data_types import NifAnnotation, NifDocument
from nif.errors import NifParseError
from nif.from_mentions import annotations_from_mentions
from nif.parse import documents_in, load_graph, parse_document
from nif.turtle import check_iri
from nif.write import write_document

__all__ = ["NifAnnotation", "NifDocument", "NifParseError", "annotations_from_mentions", "check_iri", "documents_in",
           "load_graph", "parse_document", "write_document"]
