"""The LLM provider contract and the retry policy shared by every backend.

A provider turns (system, prompt) into text. Backends raise TransientProviderError for
failures worth retrying (HTTP 429, 5xx, timeouts, dropped connections) and ProviderError for
the rest (bad key, bad request); ``call_with_retries`` retries only the transient ones, with
exponential backoff and jitter, honouring a server's Retry-After.
"""

from __future__ import annotations

import random
import time
from typing import Callable, Protocol, TypeVar, runtime_checkable

from ...errors import ProviderError, TransientProviderError

T = TypeVar("T")


@runtime_checkable
class LLMProvider(Protocol):
    """Something that completes a prompt. Implementations must be safe to call from threads."""

    @property
    def identity(self) -> str:
        """Provider and model, e.g. "anthropic:claude-sonnet-4-5"; part of every cache key."""
        ...

    def complete(self, system: str, prompt: str, *, max_tokens: int = 4096) -> str:
        """Return the model's text answer; raise ProviderError / TransientProviderError."""
        ...


def call_with_retries(call: Callable[[], T], *, max_retries: int = 4, base_delay: float = 0.5,
                      max_delay: float = 30.0,
                      sleep: Callable[[float], None] = time.sleep) -> T:
    """Run ``call``; on TransientProviderError wait and retry up to ``max_retries`` times."""
    attempt = 0
    while True:
        try:
            return call()
        except TransientProviderError as exc:
            if attempt >= max_retries:
                raise ProviderError(f"{exc} (gave up after {attempt + 1} attempts)") from exc
            delay = min(max_delay, base_delay * (2 ** attempt))
            delay = delay * (0.5 + random.random() / 2)
            if exc.retry_after is not None:
                delay = min(max_delay, max(delay, exc.retry_after))
            sleep(delay)
            attempt += 1
