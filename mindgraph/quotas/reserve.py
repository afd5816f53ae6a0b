"""LLM calls taken ahead of a document write, so that the check and the charge are one step.

A write that compiles its notes with the LLM first reserves one call per note: recorded in
the ledger at once, in the same transaction as the check, so two writes at once cannot both
have the last call — the second is refused (429) before it stores anything. The compile's
own calls then use the reserved ones instead of taking new ones; what the compile did not
call (its answer was cached, the note failed before the LLM) is given back when the write
ends. A compile that needs more calls than were reserved takes them as any call does.
"""

from __future__ import annotations

import contextvars
import threading
from typing import Any


class Reserved:
    """Row ids of calls taken ahead; the compile's calls use them one by one (from any of
    its worker threads)."""

    def __init__(self, ids: list[int], ledger: Any = None):
        self._left = list(ids)
        self.ledger = ledger        # where the unused are given back
        self._lock = threading.Lock()

    def use_one(self) -> bool:
        """True when a reserved call was left for this one (it is then spent)."""
        with self._lock:
            if not self._left:
                return False
            self._left.pop()
            return True

    def unused(self) -> list[int]:
        """The ids not spent, to give back; none are left after."""
        with self._lock:
            left, self._left = self._left, []
            return left


RESERVED: contextvars.ContextVar[Reserved | None] = contextvars.ContextVar(
    "mindgraph_quota_reserved", default=None)


__all__ = ["RESERVED", "Reserved"]
