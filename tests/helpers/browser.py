"""Debian's Chromium driven by Playwright, for the tests that need a real browser."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

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


# True once the app has stopped running its script and nothing on the page has changed for
# `quiet` ms (charts drawn, fragments arrived). Notes every change of the page in window.__moved.
QUIET = """(quiet) => {
  if (window.__moved === undefined) {
    window.__moved = Date.now();
    new MutationObserver(() => { window.__moved = Date.now(); }).observe(document.body,
      {subtree: true, childList: true, attributes: true, characterData: true});
  }
  const running = [...document.querySelectorAll("[data-testid='stStatusWidget']")]
    .some(e => /running/i.test(e.innerText));
  return !running && Date.now() - window.__moved >= quiet;
}"""


def settle(page: Any, quiet_ms: int = 700, timeout: int = 180_000) -> None:
    """Wait until the page has settled: its script done and nothing drawn for quiet_ms (in
    place of a fixed pause long enough for the slowest machine)."""
    page.wait_for_function(QUIET, arg=quiet_ms, timeout=timeout, polling=100)


def explore_on(browser: Any, server: str, model: Path, text: str) -> Any:
    """A 1400 × 1000 tab on Explore at `server` with the model of folder `model` and `text`
    (the worker's shared server opens any model its link names)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    query = f"page=explore&model={quote(str(model))}&text={quote(text)}"
    page.goto(f"{server}/?{query}", timeout=120_000)
    return page


def choose_theme(page: Any, name: str, settle_ms: int = 800) -> None:
    """Pick a theme in the ⋮ menu, as a user does (no rerun of the script follows)."""
    page.locator("[data-testid='stMainMenu']").click()
    page.locator(f"[data-testid='stMainMenuItem-theme-{name}']").click()
    page.keyboard.press("Escape")
    page.wait_for_timeout(settle_ms)


def keep(page: Any, name: str, full_page: bool = False) -> None:
    """A screenshot of the page, where ATTNLENS_SCREENSHOTS names a folder to keep it in."""
    folder = os.environ.get("ATTNLENS_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / name), full_page=full_page)
