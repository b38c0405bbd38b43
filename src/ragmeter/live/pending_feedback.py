"""Feedback waiting for its request: user feedback the watcher read before the request it names
was scored (a trace still open in the OTLP receiver's spool, a feedback line logged before its
request), kept so that the request joins it when it is scored.

Bounded: at most ``limit`` feedback records wait (:data:`PENDING_FEEDBACK`, 10,000). Past it the
oldest stops waiting: its line stays in ``feedback.jsonl`` with ``"joined": false`` and its
request, scored later, does not join it; :attr:`PendingFeedback.dropped` counts them. Feedback
on a request the sample leaves out never waits (that request is never scored).
"""

from __future__ import annotations

from collections import OrderedDict

PENDING_FEEDBACK = 10_000


def key_of(rec: dict) -> tuple[str, int]:
    """Where a feedback record was read (its file and offset): the same feedback read again, or
    written again once joined, has the same key."""
    return str(rec.get("file")), rec.get("offset", -1)


class PendingFeedback:
    """Feedback records (as ``feedback.jsonl`` holds them) by request id, oldest first."""

    def __init__(self, limit: int = PENDING_FEEDBACK) -> None:
        self.limit = limit
        self._waiting: OrderedDict[tuple[str, int], dict] = OrderedDict()  # (file, offset) -> record
        self._by_id: dict[str, list[tuple[str, int]]] = {}
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._waiting)

    def add(self, rec: dict) -> None:
        """Let ``rec`` wait for request ``rec["id"]``; the oldest waiting one goes past the bound."""
        key = key_of(rec)
        if key in self._waiting:
            return
        self._waiting[key] = rec
        self._by_id.setdefault(rec["id"], []).append(key)
        while len(self._waiting) > self.limit:
            self.discard(next(iter(self._waiting)))
            self.dropped += 1

    def discard(self, key: tuple[str, int]) -> None:
        """Stop waiting with the feedback read at ``key`` (file, offset), if it waits."""
        rec = self._waiting.pop(key, None)
        if rec is not None:
            keys = self._by_id[rec["id"]]
            keys.remove(key)
            if not keys:
                del self._by_id[rec["id"]]

    def ids(self) -> list[str]:
        """The requests feedback waits for."""
        return list(self._by_id)

    def take(self, request_id: str) -> list[dict]:
        """The records waiting for ``request_id``, oldest first, no longer waiting."""
        return [self._waiting.pop(key) for key in self._by_id.pop(request_id, [])]
