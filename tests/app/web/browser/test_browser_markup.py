"""Markup typed by a user, or carried by a token or model name, shows as text and never runs.

Playwright drives Debian's Chromium against `attnlens serve` and against exported HTML; each
payload would set window.__xss if a browser interpreted it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pytest

from attnlens import viz
from attnlens.model.net import checkpoint
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.tokenizer import CharTokenizer
from attnlens.model.net.transformer import Transformer
from attnlens.record.trace import ModelInfo, Trace
from helpers.browser import settle
from helpers.server import ROOT

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        shutil.which("chromium") is None, reason="Debian's chromium is not installed"
    ),
]
IMG = "<img src=x onerror=window.__xss=1>"
SCRIPT = "<script>window.__xss=2</script>"
SHOWN_TEXT = (
    "() => Array.from(document.querySelectorAll('.js-plotly-plot text'), t => t.textContent)"
)
CHARS = "abcdeilmnoprstwx<>=/._12 "  # enough to spell both payloads


@pytest.fixture(scope="module")
def markup_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random model whose vocabulary holds '<', '>', '=' and '/', so markup becomes tokens."""
    folder = tmp_path_factory.mktemp("markup")
    vocab = len(CharTokenizer(CHARS))
    net = Transformer(TransformerConfig(vocab, vocab, N=1, d_model=16, d_ff=32, h=2, max_len=48))
    checkpoint.save(folder, net, CharTokenizer(CHARS), {"name": "markup", "max_source_len": 40})
    return folder


def nothing_ran(page: Any) -> bool:
    return bool(page.evaluate("() => window.__xss === undefined"))


def test_markup_text_and_model_name_stay_text_in_the_app(
    markup_model: Path, browser: Any, server: str
) -> None:
    url, model = server, quote(str(markup_model))  # the worker's server, on the markup model
    page = browser.new_page()
    page.goto(f"{url}/?model={model}&text={quote(IMG)}&target={quote(SCRIPT)}", timeout=60_000)
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
    settle(page)
    assert nothing_ran(page)
    assert page.locator("img[src='x']").count() == 0  # Playwright looks in shadow roots too
    assert page.get_by_label("Text", exact=True).input_value() == IMG
    keys = page.locator("[data-testid=stBidiComponentIsolated] .lv-key").all_text_contents()
    assert keys[0] in ("<", "0 · <")  # the canvases' tokens are plain text

    page.goto(f"{url}/?model={quote(IMG)}&model_choice=other", timeout=60_000)
    # the page says it cannot open that model (the first element container may be the hidden
    # screen-size component's, which is never visible: a wait on it timed out in a run at load 20)
    page.wait_for_selector("[data-testid='stMain'] [data-testid='stAlert']", timeout=60_000)
    settle(page)
    assert nothing_ran(page)
    assert page.locator("img[src='x']").count() == 0
    page.close()


def markup_trace() -> Trace:
    """A record whose tokens are whole payloads, as a subword tokenizer could produce."""
    tokens = (IMG, SCRIPT, "&lt;b&gt;", "ok")
    n = len(tokens)
    weights = np.full((1, 1, n, n), 1.0 / n, dtype=np.float32)
    mask = np.ones((n, n), dtype=bool)
    info = ModelInfo("<b>model</b>", "encoder", 1, 1, 4)
    return Trace(info, tokens, (), weights, None, None, mask, None, None, None, None)


@pytest.mark.parametrize("view", ["heatmap", "lines"])
def test_exported_html_shows_tokens_literally(view: str, tmp_path: Path, browser: Any) -> None:
    tr = markup_trace()
    fig = (viz.head_heatmap(tr, "encoder_self", 0, 0) if view == "heatmap"
           else viz.lines_view(tr, "encoder_self", 0))  # fmt: skip
    out = tmp_path / f"{view}.html"
    fig.write_html(out, include_plotlyjs=True)
    page = browser.new_page()
    page.goto(out.as_uri())
    page.wait_for_selector(".js-plotly-plot text", timeout=120_000)
    page.wait_for_timeout(500)
    assert nothing_ran(page)
    shown = page.evaluate(SHOWN_TEXT)
    assert any(IMG in s for s in shown), shown
    assert any(SCRIPT in s for s in shown)
    assert any("&lt;b&gt;" in s for s in shown)  # an escaped-looking token also stays as typed
    page.close()


def test_cli_export_of_markup_model_runs_nothing(
    markup_model: Path, tmp_path: Path, browser: Any
) -> None:
    out = tmp_path / "lines.html"
    done = subprocess.run(
        [sys.executable, "-m", "attnlens.app.cli.main", "plot", str(markup_model), IMG,
         "--view", "lines", "--target", SCRIPT, "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    page = browser.new_page()
    page.goto(out.as_uri())
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    page.wait_for_timeout(500)
    assert nothing_ran(page)
    page.close()
