"""A scripted LLM for tests and dry runs (the test double ships with the library)."""

from __future__ import annotations

import threading
from typing import Callable

from ...errors import ProviderError


class FakeLLMProvider:
    """Answers from a function of (system, prompt), or raises what the function raises.

    ``calls`` counts every call, so tests can assert that a re-run makes zero provider calls.
    """

    def __init__(self, respond: Callable[[str, str], str], model: str = "fake-1"):
        self._respond = respond
        self._model = model
        self._lock = threading.Lock()
        self.calls = 0
        self.prompts: list[str] = []

    @property
    def identity(self) -> str:
        """"fake:<model>"."""
        return f"fake:{self._model}"

    def complete(self, system: str, prompt: str, *, max_tokens: int = 4096) -> str:
        """Record the call and return the scripted answer."""
        with self._lock:
            self.calls += 1
            self.prompts.append(prompt)
        answer = self._respond(system, prompt)
        if not isinstance(answer, str):
            raise ProviderError("fake provider returned a non-string answer")
        return answer
