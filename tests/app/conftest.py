"""Fixtures of the browser tests in this folder: one Chromium and one `attnlens serve` per test
file (a file that needs another server or browser defines its own of the same name)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.browser import chromium
from helpers.server import serving


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, launched once for the module's tests."""
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def server(tiny_model_dir: Path) -> Iterator[str]:
    """`attnlens serve` on the tiny untrained model, for the module's tests."""
    with serving(str(tiny_model_dir)) as url:
        yield url
