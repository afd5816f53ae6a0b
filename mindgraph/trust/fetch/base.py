"""The contract every evidence fetcher keeps: a reference in, its text out, or why not.

::

    FetchError                  the evidence could not be read; ``reason`` says why
        .transient              True for a fault that may pass (timeout, connection, 5xx,
                                429): a cached copy may stand in; False when the source
                                itself answered no (404, not text, too large)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ...fsutil import sha256_text


@dataclass(frozen=True)
class Fetched:
    """A piece of evidence as text, the SHA-256 of that text, and how it was obtained."""

    text: str
    sha256: str
    note: str = ""          # e.g. "from the cache (fetched 2026-11-30)"; "" when read live

    @classmethod
    def of(cls, text: str, note: str = "") -> "Fetched":
        """The text with its hash."""
        return cls(text, sha256_text(text), note)


class FetchError(Exception):
    """Evidence that could not be read: the reason, and whether it may pass."""

    def __init__(self, reason: str, transient: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.transient = transient


class Fetcher(Protocol):
    """Reads one kind of evidence (a local file, a URL): ``fetch`` raises FetchError."""

    def fetch(self, target: str) -> Fetched:
        """The text of ``target``."""
        ...
