"""Fixtures for ingest tests: a workspace folder with raw/, and helpers to fill and hash it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from mindgraph.config import Settings, load_settings

FIXED_MTIME = 1_700_000_000  # 2023-11-14, so compiled dates never depend on the test's clock


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty base folder with raw/ in it."""
    (tmp_path / "raw").mkdir()
    return tmp_path


@pytest.fixture
def settings(workspace: Path) -> Settings:
    """Default (offline) settings for ``workspace``."""
    return load_settings(workspace)


@pytest.fixture
def write_raw(workspace: Path) -> Callable[..., Path]:
    """write_raw("a/b.md", "text" or b"bytes") → the file, with a fixed mtime."""

    def write(rel: str, content: str | bytes, mtime: float = FIXED_MTIME) -> Path:
        path = workspace / "raw" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
        os.utime(path, (mtime, mtime))
        return path

    return write
