"""Scripted HTTP for the remote embedding providers (httpx.MockTransport handlers)."""

from __future__ import annotations

import httpx
import numpy as np


class Script:
    """Plays canned responses in order (the last one repeats) and records each request."""

    def __init__(self, *steps):
        self.steps = list(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        return step(request) if callable(step) else step


def fake_vector(text: str, dim: int) -> list[float]:
    """A deterministic, non-normalised vector for a text (so order mix-ups show)."""
    rng = np.random.default_rng(abs(hash(text)) % (2 ** 32))
    return (rng.standard_normal(dim) * 3).round(6).tolist()


def timeout(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("The read operation timed out", request=request)


def refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
