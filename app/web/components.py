"""Figures the browser draws itself from a compact payload: our own HTML, CSS and JavaScript
(app/web/static/), mounted in the page by Streamlit's components v2 (no iframe), the page's theme
read from Streamlit's CSS variables. On Explore they draw what a Plotly figure of thousands of
SVG elements cost the browser a few hundred ms a keystroke to draw (docs/speed.md)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.components.v2.types import ComponentRenderer

from attnlens.viz.shared.margins import BASE_FONT
from attnlens.viz.shared.style import PROJECTOR_FONT, TITLE_EXTRA

STATIC = Path(__file__).parent / "static"


def component(name: str, stem: str, html: str) -> ComponentRenderer:
    """A component named `name` of `html` and static/STEM.css, static/STEM.js (read once), each
    after what every such figure shares: static/figure_base.css (the theme's text, the hover
    box) and static/figure_base.js (the canvas, labels and hover box)."""
    css = "".join((STATIC / f"{p}.css").read_text(encoding="utf-8") for p in ("figure_base", stem))
    js = "".join((STATIC / f"{p}.js").read_text(encoding="utf-8") for p in ("figure_base", stem))
    return st.components.v2.component(name, html=html, css=css, js=js)


def text_sizes(present: bool) -> dict[str, int]:
    """Label and title sizes in px: the figures' own, or a projector's (as viz.style's)."""
    size = PROJECTOR_FONT if present else BASE_FONT
    return {"text_px": size, "title_px": size + (TITLE_EXTRA if present else 2)}
