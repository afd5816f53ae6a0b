"""Fixtures for the LLM provider tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def sleeps() -> list[float]:
    """The backoff delays a provider asked for (its sleep function appends here)."""
    return []
