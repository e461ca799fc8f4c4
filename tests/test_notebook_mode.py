"""attnlens.notebook_mode's pieces: a figure as Plotly JSON plus HTML that needs no URL, and a
clear refusal outside a notebook."""

from __future__ import annotations

import re

import numpy as np
import pytest

import attnlens
from attnlens.notebook import figure_bundle, loader_html, plotly_js
from attnlens.record.trace import ModelInfo, Trace


def tiny_trace() -> Trace:
    w = np.full((1, 1, 2, 2), 0.5, dtype=np.float32)
    return Trace(
        model=ModelInfo("t", "encoder", 1, 1, 4), src_tokens=("a", "b"), tgt_tokens=(),
        encoder_self=w, decoder_self=None, cross=None, encoder_self_mask=np.ones((2, 2), bool),
        decoder_self_mask=None, cross_mask=None, positional_encoding=None, tgt_logprobs=None,
    )  # fmt: skip


def test_a_figure_goes_out_as_json_and_as_html_for_the_notebooks_own_plotly_js() -> None:
    fig = attnlens.head_heatmap(tiny_trace(), "encoder_self", 0, 0)
    bundle = figure_bundle(fig.to_plotly_json())
    assert set(bundle) == {"application/vnd.plotly.v1+json", "text/html"}
    assert bundle["application/vnd.plotly.v1+json"]["data"][0]["type"] == "heatmap"
    page = bundle["text/html"]
    assert "Plotly.newPlot" in page and f"height:{fig.layout.height}px" in page  # its own height
    assert not re.search(r"https?://|<script[^>]+src=", page)  # drawn by the copy in the notebook


def test_the_loader_holds_plotly_js_itself() -> None:
    version, source = plotly_js()
    loader = loader_html()
    assert source in loader and f"plotly.js {version}" in loader
    assert not re.search(r"<script[^>]+src=", loader)


def test_outside_a_notebook_it_says_so() -> None:
    with pytest.raises(attnlens.InputError, match="notebook_mode is for Jupyter notebooks"):
        attnlens.notebook_mode()
