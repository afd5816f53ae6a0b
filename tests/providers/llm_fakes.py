"""Test doubles for the LLM provider tests: scripted HTTP answers."""

from __future__ import annotations

class Script:
    """Plays canned responses in order (the last one repeats) and records each request."""

    def __init__(self, *steps):
        self.steps = list(steps)
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        return step(request) if callable(step) else step


def timeout_with(http):
    """A handler that times out, raised with the given httpx-like module's exception."""
    def timeout(request):
        raise http.ReadTimeout("The read operation timed out", request=request)
    return timeout
