"""Fixtures of the browser tests in this folder: one Chromium per test file, and one
`attnlens serve` on the tiny model per test worker, shared by every file it runs (each starts in
5–25 s on a busy machine; the server is shared by every browser session by design, and each test
opens its own tabs). A file that needs another server or browser defines its own of the same
name."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.browser import chromium
from helpers.server import serving


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, launched once for the module's tests (Playwright's sync API runs an
    event loop in this thread while it is open: held past the module, it broke other files'
    asyncio.run and their own Playwright)."""
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="session")
def server(tiny_model_dir: Path) -> Iterator[str]:
    """`attnlens serve` on the tiny untrained model (ATTNLENS_BROWSER_MODEL names another: the
    README's screenshots come from `reverse`), for the worker's tests."""
    with serving(os.environ.get("ATTNLENS_BROWSER_MODEL", str(tiny_model_dir))) as url:
        yield url
