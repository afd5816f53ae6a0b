"""The headless Chromium the browser tests share (one per module)."""

from __future__ import annotations

import pytest

from browser_support import CHROMIUM_ARGS, chromium_path


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (the system's), driven by Playwright."""
    path = chromium_path()
    if path is None:
        pytest.skip("no chromium installed (apt-get install chromium; .ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield launched
        launched.close()
