"""The interface every entity linker behind the service and the evaluation implements."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from annotator.data_types import Mention

Span = tuple[int, int]


@runtime_checkable
class EntityLinker(Protocol):
    """Text (plus optional given spans) → linked mentions.

    `spans=None` is end-to-end linking (A2KB); given `(start, end)` spans are disambiguated, one
    mention per span at most, NIL (`title` None) where no entity is likely enough (D2KB). Offsets are
    code-point indices into `text`, half-open.
    """

    def link(self, text: str, spans: Sequence[Span] | None = None) -> list[Mention]: ...

    def describe(self) -> dict[str, str | int | float]:
        """Identity of the model and KB in use, counts as numbers (shown by the service's /health)."""
        ...


@runtime_checkable
class BatchEntityLinker(EntityLinker, Protocol):
    """An entity linker that also links several documents in one pass, each A2KB or D2KB."""

    def link_batch(self, texts: Sequence[str],
                   spans: Sequence[Sequence[Span] | None] | None = None) -> list[list[Mention]]:
        """`link` of every text, with its own spans (None: all A2KB), in the order given."""
        ...


@runtime_checkable
class ReloadableLinker(EntityLinker, Protocol):
    """An entity linker that can be rebuilt over its KB as it is now on disk, for a service that picks KB changes
    up without a restart (`ThreadBoundLinker.reload`)."""

    def reloaded(self) -> ReloadableLinker:
        """A new linker sharing this one's models, over the KB as it is now (its changes applied); this one is left
        as it was, and goes on linking meanwhile.

        Raises:
            Exception: the KB on disk cannot be loaded (e.g. ModelLoadError, KBFormatError); nothing changes.
        """
        ...


def check_spans(text: str, spans: Sequence[Span] | None) -> None:
    """Raises ValueError when a given span is empty or outside `text`."""
    for start, end in spans or ():
        if not 0 <= start < end <= len(text):
            raise ValueError(f"span ({start}, {end}) is empty or outside a text of {len(text)} characters")
