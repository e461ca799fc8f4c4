"""Debian's Chromium driven by Playwright, for the tests that need a real browser."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from .server import CHROMIUM_ARGS


@contextlib.contextmanager
def chromium(extra_args: Sequence[str] = ()) -> Iterator[Any]:
    """Debian's chromium (never a browser Playwright downloads), launched with CHROMIUM_ARGS and
    extra_args and always closed; the test is skipped where it is not installed."""
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=[*CHROMIUM_ARGS, *extra_args])
        try:
            yield browser
        finally:
            browser.close()
