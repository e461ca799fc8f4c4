"""What the app's download buttons give is what it shows, labels included.

Each view is exported the way its buttons export it (app/web/show.py's export, with Streamlit
imported, whose default template has fixed margins: the issue's labels cut at the left edge).
The SVG is opened in Chromium to measure every text; the PNG must carry ink where each row
label is. Kaleido draws both with the system's Chromium.
"""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest
from PIL import Image

import attnlens
from attnlens import analysis, viz
from attnlens.app.web import show
from attnlens.viz.decoding.decode_step import step_attention, up_to_step
from attnlens.viz.shared.style import PROJECTOR_FONT, image_size, projector
from helpers.server import CHROMIUM_ARGS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:The kopts argument is ignored:UserWarning"),
    pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is missing"),
]
MEASURE = """() => Array.from(document.querySelectorAll('text'))
  .filter(t => t.textContent.trim())
  .map(t => { const b = t.getBoundingClientRect();
    const g = t.closest('g[class]');
    return {text: t.textContent, box: [b.left, b.top, b.right, b.bottom],
            row: !!(t.closest('.ytick') || (t.closest('.textpoint') && b.right < 300)),
            group: g ? g.getAttribute('class') : ''}; })"""


@pytest.fixture(scope="module")
def figures(tiny_model_dir: Path) -> dict[str, Callable[[], go.Figure]]:
    """Every view the app offers for download, on the tiny model's records."""
    lens = attnlens.load(str(tiny_model_dir))
    tr = lens.trace("bad cafe")
    run = lens.decode("bad cafe", strategy="beam", beam_size=3, max_len=5)
    stats = analysis.head_statistics(tr)
    return {
        "heatmap": lambda: viz.head_heatmap(tr, "cross", 1, 0),
        "lines": lambda: viz.lines_view(tr, "cross", 1, heads=[0]),
        "masks": lambda: viz.masks_view(tr, "decoder_self"),
        "positional": lambda: viz.positional_view(tr),
        "rollout": lambda: viz.rollout_view(tr, "encoder_self"),
        "stats": lambda: viz.head_stats_chart(stats, "encoder_self", "entropy"),
        "candidates": lambda: viz.candidate_bars(run, 1),
        "step": lambda: step_attention(run, 1, 1, 0),
        "beam": lambda: up_to_step(viz.beam_tree(run), len(run.steps) - 1),
        "alignment": lambda: viz.decoding_alignment(run),
    }


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module", autouse=True)
def kaleido_server() -> Iterator[None]:
    """One kaleido browser for the module's exports instead of one per image."""
    if not show.can_export_images():
        pytest.skip("PNG and SVG export needs kaleido and a Chromium")
    import kaleido

    kaleido.start_sync_server(silence_warnings=True)
    yield
    kaleido.stop_sync_server(silence_warnings=True)


def as_shown(fig: go.Figure, present: bool) -> go.Figure:
    """The figure as the app draws it (show.styled): clear backgrounds, projector sizes."""
    fig.update_layout(plot_bgcolor=show.CLEAR, paper_bgcolor=show.CLEAR)
    return projector(fig, PROJECTOR_FONT) if present else fig


def measured(browser: Any, svg: bytes, tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "figure.svg"
    path.write_bytes(svg)
    page = browser.new_page()
    page.goto(path.as_uri())
    found = list(page.evaluate(MEASURE))
    page.close()
    return found


def ink(png: Image.Image, box: list[float], scale: float) -> int:
    """Pixels inside a box (in SVG px) that differ clearly from the image's background."""
    grey = np.asarray(png.convert("L"), dtype=np.int16)
    background = int(np.median(grey[:4, :]))  # the top rows: margin, not drawing
    left, top, right, bottom = (round(v * scale) for v in box)
    region = grey[max(top, 0) : bottom, max(left, 0) : right]
    return int((np.abs(region - background) > 60).sum())


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presentation"])
@pytest.mark.parametrize(
    "view",
    ["heatmap", "lines", "masks", "positional", "rollout", "stats", "candidates", "step",
     "beam", "alignment"],
)  # fmt: skip
def test_every_label_of_a_downloaded_figure_is_inside_the_image(
    view: str, present: bool, figures: dict[str, Callable[[], go.Figure]], browser: Any,
    tmp_path: Path,
) -> None:  # fmt: skip
    fig = as_shown(figures[view](), present)
    size = image_size(fig)
    svg = show.export(fig, "svg")
    texts = measured(browser, svg, tmp_path)
    assert texts, "the SVG has text"
    width, height = size["width"], size["height"]
    outside = [
        f"{t['text']!r} at {[round(v) for v in t['box']]}"
        for t in texts
        if t["box"][0] < -0.5 or t["box"][1] < -0.5 or t["box"][2] > width + 0.5
        or t["box"][3] > height + 0.5
    ]  # fmt: skip
    assert not outside, f"cut at the edge of a {width}×{height} image: {outside}"
    png = Image.open(io.BytesIO(show.export(fig, "png")))
    assert png.size == (2 * width, 2 * height)
    rows = [t for t in texts if t["row"]]
    if view in ("heatmap", "lines", "masks", "rollout", "stats", "candidates", "beam"):
        assert rows, "row labels are drawn"
    blank = [t["text"] for t in rows if ink(png, t["box"], 2.0) < 5]
    assert not blank, f"row labels with nothing drawn in the PNG: {blank}"


PLOT_AREA_SVG = """() => { const r = document.querySelector('clipPath.axesclip[id$="xy"] rect');
  const svg = document.querySelector('svg');
  return {width: +svg.getAttribute('width'), height: +svg.getAttribute('height'),
          area: ['x', 'y', 'width', 'height'].map(k => +r.getAttribute(k))}; }"""
X_LABELS = """() => Array.from(document.querySelectorAll('.xtick text')).filter(t => t.textContent)
  .map(t => { const b = t.getBoundingClientRect(); return [b.left, b.right]; })
  .sort((a, b) => a[0] - b[0])"""
PLOT_AREA_HTML = """() => { const L = document.querySelector('.js-plotly-plot')._fullLayout;
  return {width: L.width, height: L.height, area: [L._size.l, L._size.t, L._size.w, L._size.h]};
}"""


@pytest.mark.parametrize("view", ["heatmap", "beam", "candidates"])
def test_html_png_and_svg_of_a_figure_share_one_layout(
    view: str, figures: dict[str, Callable[[], go.Figure]], browser: Any, tmp_path: Path
) -> None:
    """Issue 38: the SVG had another layout than the PNG, and the HTML filled the window:
    all three now have the same width, height and plot area (so the same margins), and the
    x labels stand apart (the 556 px PNG of Plotly's camera had them on top of one another)."""
    fig = as_shown(figures[view](), present=False)
    found = {}
    for fmt, script in (("svg", PLOT_AREA_SVG), ("html", PLOT_AREA_HTML)):
        path = tmp_path / f"figure.{fmt}"
        path.write_bytes(show.export(fig, fmt))
        page = browser.new_page(viewport={"width": 1800, "height": 1400})
        page.goto(path.as_uri())
        if fmt == "html":
            page.wait_for_function("() => document.querySelector('.js-plotly-plot')?._fullLayout")
        found[fmt] = page.evaluate(script)
        if fmt == "svg":  # the PNG is drawn from the same SVG by the same kaleido
            labels = page.evaluate(X_LABELS)
        page.close()
    size = image_size(fig)
    assert (found["svg"]["width"], found["svg"]["height"]) == (size["width"], size["height"])
    assert (found["html"]["width"], found["html"]["height"]) == (size["width"], size["height"])
    assert np.allclose(found["svg"]["area"], found["html"]["area"], atol=1.0), found
    png = Image.open(io.BytesIO(show.export(fig, "png")))
    assert png.size == (2 * size["width"], 2 * size["height"])
    assert labels and all(a[1] <= b[0] for a, b in pairwise(labels)), labels  # apart


def test_an_svgs_heatmap_cells_are_vectors_in_the_colours_of_its_png(
    figures: dict[str, Callable[[], go.Figure]], browser: Any, tmp_path: Path
) -> None:
    """Issue 49: the SVG held the cells as an embedded PNG. Now each cell is a filled path
    (viz/shared/vector_cells.py); the SVG as Chromium draws it has, at every cell's centre,
    the colour the PNG has there (within a shade of 64 steps)."""
    fig = as_shown(figures["heatmap"](), present=False)
    svg = show.export(fig, "svg")
    text = svg.decode()
    assert re.search(r"<image[^>]*opacity: 0", text)  # the picture hidden
    assert text.count('fill-rule="evenodd"') >= 10  # a path per shade of the cells
    path = tmp_path / "figure.svg"
    path.write_bytes(svg)
    size = image_size(fig)
    page = browser.new_page(viewport=size)
    page.goto(path.as_uri())
    cells = page.evaluate(CELL_CENTRES)
    drawn = np.asarray(Image.open(io.BytesIO(page.screenshot())).convert("RGB"), dtype=float)
    page.close()
    png = Image.open(io.BytesIO(show.export(fig, "png"))).convert("RGB")
    raster = np.asarray(png.resize((size["width"], size["height"])), dtype=float)
    assert len(cells) == len(fig.data[0].x) * len(fig.data[0].y)
    worst = max(float(np.abs(drawn[y, x] - raster[y, x]).max()) for x, y in cells)
    assert worst <= 12, f"a cell's colour differs by {worst} of 255"


# the centre of every cell of the first plot, in px of the page (the SVG's own coordinates)
CELL_CENTRES = """() => { const clip = document.querySelector('clipPath.axesclip[id$="xy"] rect');
  const [x0, y0, w, h] = ['x', 'y', 'width', 'height'].map(k => +clip.getAttribute(k));
  const ticks = (axis) => document.querySelectorAll(`.${axis}tick`).length;
  const nx = ticks('x'), ny = ticks('y'), out = [];
  for (let i = 0; i < ny; i++) for (let j = 0; j < nx; j++)
    out.push([Math.round(x0 + (j + 0.5) * w / nx), Math.round(y0 + (i + 0.5) * h / ny)]);
  return out; }"""
