"""Explore's measure on a long input in Chromium (issue 47): "norm" redraws the overview canvas
with its new title and colour bar, puts measure=norm in the address, and the every-head grid
switches to the norms in the browser, the server sending one head's window only (bytes
counted on the websocket); "weight" goes back. A GPT-2-shaped model with random weights built
here, its record kept as scores (the budget set below the weights)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

import attnlens
from helpers.browser import settle
from helpers.long_gpt2 import words
from helpers.server import serving

pytestmark = pytest.mark.browser
N = 400
BUDGET = {"ATTNLENS_MAX_RECORD_MB": "1"}  # 2 × 2 heads × 401² weights: 2.5 MB
TIP = r"queries (\d+)–(\d+)\nkeys (\d+)–(\d+)\nmax α‖f\(x\)‖ (\S+)$"  # an overview block's
NORM_TITLE = "decoder self-attention · layer 1 · head 0 · norm α‖f(x)‖"


@pytest.fixture(scope="module")
def long_server(long_gpt2_dir: Path) -> Iterator[str]:
    with serving(str(long_gpt2_dir), env=BUDGET) as url:
        yield url


def pick(page: Any, measure: str) -> None:
    radio = page.locator('[data-testid="stRadio"]').filter(has_text="Measure")
    radio.get_by_text(measure, exact=True).click()


def wait_title(page: Any, selector: str, part: str) -> None:
    page.locator(selector).filter(has_text=part).first.wait_for(timeout=90_000)


def test_switching_the_measure_redraws_the_overview_and_the_grid(
    browser: Any, long_server: str
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    received: list[int] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(len(f))))
    page.goto(f"{long_server}/?page=explore&text={quote(words(N))}", timeout=120_000)
    page.locator("canvas.hz-canvas[data-drawn]").wait_for(timeout=120_000)
    page.locator("canvas.hg-canvas[data-drawn]").wait_for(timeout=120_000)
    settle(page)
    assert page.locator(".hz-title").text_content() == "decoder self-attention · layer 1 · head 0"
    assert "norm" not in page.locator(".hg-title").text_content()
    received.clear()
    pick(page, "norm")
    wait_title(page, ".hz-title", "norm α‖f(x)‖")
    wait_title(page, ".hg-title", "norm α‖f(x)‖")
    settle(page)
    assert page.locator(".hz-title").text_content() == NORM_TITLE
    assert page.locator(".hz-bar-title").text_content().startswith("norm α‖f(x)‖ ÷ ")
    assert "measure=norm" in page.url
    assert sum(received) < 150_000, received  # one head's window, not the grid again
    pick(page, "weight")
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stBidiComponentIsolated]') || "
        "[...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')].some((h) => "
        "h.shadowRoot && (h.shadowRoot.querySelector('.hz-title') || {}).textContent === "
        "'decoder self-attention · layer 1 · head 0')",
        timeout=90_000,
    )
    settle(page)
    assert "norm" not in page.locator(".hg-title").text_content()
    assert "measure=weight" in page.url
    page.close()


def test_the_hover_gives_a_small_norm_in_figures_not_zero(
    browser: Any, long_server: str, long_gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This model's αᵢⱼ ‖f(xⱼ)‖ are about 1e-5: the overview's hover read "max α‖f(x)‖ 0.0000"
    on every cell. It gives four figures, the block's largest as the record has it."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{long_server}/?page=explore&measure=norm&text={quote(words(N))}", timeout=120_000)
    wait_title(page, ".hz-title", "norm α‖f(x)‖")
    settle(page)
    canvas = page.locator("canvas.hz-canvas")
    canvas.scroll_into_view_if_needed()
    box, g = canvas.bounding_box(), json.loads(canvas.get_attribute("data-geometry"))
    page.mouse.move(box["x"] + g["left"] + 0.3 * g["w"], box["y"] + g["top"] + 0.8 * g["h"])
    tip = page.locator(".hz-tip")
    tip.wait_for(state="visible", timeout=30_000)
    found = re.search(
        r"queries (\d+)–(\d+)\nkeys (\d+)–(\d+)\nmax α‖f\(x\)‖ (\S+)$", tip.inner_text()
    )
    assert found, tip.inner_text()
    q0, q1, k0, k1 = (int(x) for x in found.groups()[:4])
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")
    truth = attnlens.load(str(long_gpt2_dir)).trace(words(N), record="scores")
    block = truth.head("decoder_self", 1, 0, slice(q0, q1 + 1), slice(k0, k1 + 1), "norm")
    assert 0 < block.max() < 1e-3  # the model's norms are that small
    assert float(found.group(5)) == pytest.approx(block.max(), rel=0.01)
    page.close()
