"""A linker's mentions as NIF annotations: one per span, as GERBIL reads a set of URIs per span."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from nif.data_types import NifAnnotation

if TYPE_CHECKING:  # only the type: nif does not depend on the model
    from annotator.data_types import Mention


def annotations_from_mentions(mentions: Sequence[Mention], *, spans: Iterable[tuple[int, int]] | None = None,
                              uris: Callable[[Mention], Iterable[str]] = lambda mention: (mention.uri,),
                              ) -> tuple[NifAnnotation, ...]:
    """One annotation per span, sorted by span, best-scored mention first.

    Mentions sharing a span (a linker may give several) become one annotation whose URIs are the union, in score
    order, and whose confidence is the best score. With `spans` (D2KB) only those spans are answered.

    Args:
        mentions: the linker's mentions.
        spans: the given spans, or None (A2KB: every mention's span).
        uris: a mention's URIs (default: its one URI).
    """
    wanted = set(spans) if spans is not None else None
    by_span: dict[tuple[int, int], list[Mention]] = {}
    for mention in sorted(mentions, key=lambda mention: -mention.score):
        span = (mention.start, mention.end)
        if wanted is None or span in wanted:
            by_span.setdefault(span, []).append(mention)
    return tuple(NifAnnotation(start, end, tuple(dict.fromkeys(uri for m in group for uri in uris(m))), group[0].score)
                 for (start, end), group in sorted(by_span.items()))
