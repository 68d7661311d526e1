"""Stopping one document's linking part-way: its deadline passed or its caller went away.

torch cannot interrupt an operator, so the pipeline checks between its batches (`check_cancelled`) whether the
document it is linking was cancelled, and stops there with `LinkingCancelled`. The cancellation in force is
ambient, per thread (a context variable), so that the `EntityLinker` interface keeps `link(text, spans)`.
"""
from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar


class LinkingCancelled(Exception):
    """The document's linking stopped before it finished; the message says why."""


class Cancellation:
    """One document's stop signal: a monotonic-clock deadline, or `cancel()` called by whoever waits for it."""

    def __init__(self, deadline: float | None = None, *, overdue: str = "deadline passed") -> None:
        self.deadline = deadline
        self._overdue = overdue
        self._reason: str | None = None

    @classmethod
    def after(cls, seconds: float | None) -> Cancellation:
        """A cancellation that falls due `seconds` from now (never when None)."""
        if seconds is None:
            return cls()
        return cls(time.monotonic() + seconds, overdue=f"took longer than the limit of {seconds:g} s")

    def remaining(self) -> float | None:
        """Seconds left before the deadline (0 once passed), None without one."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def cancel(self, reason: str) -> None:
        """Stops the document at its next check; the first reason given is the one reported."""
        self._reason = self._reason or reason

    def reason(self) -> str | None:
        """Why the document should stop now, or None while it may go on."""
        if self._reason is None and self.deadline is not None and time.monotonic() >= self.deadline:
            self._reason = self._overdue
        return self._reason

    def check(self) -> None:
        """Raises LinkingCancelled once cancelled or past the deadline."""
        reason = self.reason()
        if reason is not None:
            raise LinkingCancelled(reason)


class BatchCancellation(Cancellation):
    """The stop signal of one pass over several documents: due only once every one of theirs is, so that a
    document cancelled part-way does not stop the others'."""

    def __init__(self, members: Sequence[Cancellation]) -> None:
        super().__init__()
        self.members = tuple(members)

    def cancel(self, reason: str) -> None:
        for member in self.members:
            member.cancel(reason)

    def reason(self) -> str | None:
        reasons = [member.reason() for member in self.members]
        if not reasons or None in reasons:
            return None
        return "; ".join(dict.fromkeys(reason for reason in reasons if reason is not None))


_current: ContextVar[Cancellation | None] = ContextVar("entqa_cancellation", default=None)


@contextmanager
def cancellable(cancellation: Cancellation) -> Iterator[None]:
    """Makes `cancellation` the one `check_cancelled` consults on this thread while the block runs."""
    token = _current.set(cancellation)
    try:
        yield
    finally:
        _current.reset(token)


def check_cancelled() -> None:
    """Raises LinkingCancelled when the document being linked here was cancelled; outside `cancellable`, nothing."""
    cancellation = _current.get()
    if cancellation is not None:
        cancellation.check()
