"""Small types that cross module boundaries of the annotator (offsets are code points, half-open)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Entity:
    """A KB entry: its title (enwiki style, spaces), its description ("" when title-only), optional QID."""

    title: str
    text: str = ""
    qid: str | None = None


@dataclass(frozen=True)
class Mention:
    """A linked span of the input text.

    `start`/`end` index the original text (`text[start:end] == surface`); `uri` is the DBpedia
    resource IRI of `title`; `score` is p_rerank × p_span of the reader (D2KB: the best such score).
    A given span (D2KB) whose best score is not above γ is NIL: `title` is None and `uri` an emerging-entity
    IRI, `<NIL_NAMESPACE>notInWiki/<surface>` (`annotator.uris`); unless its text is the title of a KB entry
    likely meant (it begins in lower case, "car": *Car*; or the entry is its best candidate already), which it then
    takes, with that score (`annotator.pipeline.title_answers`). `description` is the start of the entity's KB
    description ("" when NIL or unknown); it follows from `title`, so it takes no part in comparisons.
    """

    start: int
    end: int
    surface: str
    title: str | None
    uri: str
    score: float
    description: str = field(default="", compare=False)
