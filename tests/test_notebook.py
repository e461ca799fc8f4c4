"""docs/notebook.ipynb runs top to bottom in a Jupyter kernel from this environment (nbclient):
its figures are in its outputs, drawn from the same records, with plotly.js in the notebook
once and nothing fetched from the network; long work shows tqdm's notebook bar."""

from __future__ import annotations

import base64
import os
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

import attnlens
from attnlens.notebook import plotly_js
from attnlens.viz.heads.colour_scale import colour_position
from helpers.browser import chromium

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "notebook.ipynb"
PLOTLY = "application/vnd.plotly.v1+json"
WIDGET = "application/vnd.jupyter.widget-view+json"
URL = re.compile(r"https?://")
KERNEL_CHECK = "import sys\nprint(sys.executable)"
pytestmark = pytest.mark.slow  # a kernel, torch and transformers: 10-18 s on two cores


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The notebook after a run (CI unset, as in a user's Jupyter), with a last cell naming the
    kernel's Python."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(KERNEL_CHECK))
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"OMP_NUM_THREADS": "1"}
    where = str(tmp_path_factory.mktemp("notebook"))
    client = NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": where}}
    )
    client.execute(env=env)
    return nb


def cell(nb: Any, source: str) -> Any:
    """The one code cell whose source holds this text."""
    found = [c for c in nb.cells if c.cell_type == "code" and source in c.source]
    assert len(found) == 1, source
    return found[0]


def data(c: Any, mime: str) -> list[Any]:
    return [o["data"][mime] for o in c.get("outputs", []) if mime in o.get("data", {})]


def array(value: Any) -> np.ndarray:
    """A Plotly JSON array: a list, or base64 typed-array data."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if isinstance(shape, str):
            shape = [int(n) for n in shape.split(",")]
        return flat.reshape(shape) if shape else flat
    return np.asarray(value, dtype=float)


FIGURES = {  # a figure cell's call → the trace types its figure holds
    "attnlens.head_heatmap(tr,": {"heatmap"},
    "attnlens.compare_runs(": {"bar"},
    "attnlens.beam_tree(beam)": {"scatter"},
    "attnlens.model_view(small,": {"heatmap", "scatter"},  # the tiles, and a point naming each
    "attnlens.lines_view(theirs,": {"scatter"},
}


def test_it_runs_in_this_environments_kernel_and_shows_records_and_restored_models(
    executed: Any,
) -> None:
    printed = "".join(o.get("text", "") for o in cell(executed, KERNEL_CHECK).outputs)
    assert printed.strip() == sys.executable
    assert "attnlens Trace" in data(cell(executed, 'tr = lens.trace("the cat'), "text/html")[0]
    assert "lo kasa" in data(cell(executed, 'beam = lens.decode("the house"'), "text/html")[0]
    wrapped = "".join(o.get("text", "") for o in cell(executed, "gpt = attnlens.wrap").outputs)
    assert wrapped.startswith("sdpa True")  # the model as it was before attnlens ran it


def test_every_figure_is_in_the_outputs_twice_over_and_drawn_from_the_record(
    executed: Any,
) -> None:
    for call, types in FIGURES.items():
        c = cell(executed, call)
        (figure,) = data(c, PLOTLY)  # JupyterLab's and VS Code's own Plotly renderers draw this
        assert {t.get("type", "scatter") for t in figure["data"]} == types, call
        (page,) = data(c, "text/html")  # ... and every other front end draws this
        assert "Plotly.newPlot" in page and "plotly-graph-div" in page
    heatmap = data(cell(executed, "attnlens.head_heatmap(tr,"), PLOTLY)[0]["data"][0]
    trace = attnlens.load("translate").trace("the cat sees a house")
    assert trace.cross is not None
    held = array(heatmap["customdata"])  # the weights, for the hover; z is their colour, ∛weight
    np.testing.assert_allclose(held, trace.cross[1, 0], atol=1e-6)
    np.testing.assert_allclose(array(heatmap["z"]), colour_position(held, "perceptual"), atol=1e-6)
    thumbs = data(cell(executed, "attnlens.model_view(small,"), PLOTLY)[0]["data"]
    assert len(thumbs[1]["x"]) == 2 * 4  # a tile for every head of the wrapped model: 2 × 4


def test_plotly_js_is_in_the_notebook_once_and_nothing_comes_from_the_network(
    executed: Any,
) -> None:
    version, source = plotly_js()
    pages = [(i, p) for i, c in enumerate(executed.cells) for p in data(c, "text/html")]
    holding = [i for i, p in pages if source[:2000] in p]
    assert holding == [1], "plotly.js goes into the notebook_mode cell, and only there"
    loader = next(p for i, p in pages if i == 1)
    assert f"plotly.js {version}" in loader and source in loader
    assert not re.search(r"<script[^>]+src=|import\s*[\"']", loader)  # no script fetched
    for i, page in pages:
        if i != 1:
            assert not URL.search(page), f"cell {i} names a URL"
    for c in executed.cells:
        for figure in data(c, PLOTLY):
            assert not URL.search(str(figure))


def test_long_work_shows_a_notebook_progress_bar(executed: Any) -> None:
    evaluation = cell(executed, "report = lens.capabilities.evaluation.evaluate(")
    assert data(evaluation, WIDGET), "tqdm's notebook bar (an ipywidgets view)"
    printed = "".join(o.get("text", "") for o in evaluation.outputs)
    assert "exact match" in printed and "evaluate" not in printed  # no text bar besides it


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, launched once for this module's tests."""
    with chromium() as launched:
        yield launched


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_the_figures_draw_in_a_browser_with_the_network_cut_off(
    executed: Any, browser: Any, tmp_path: Path
) -> None:
    """The notebook's HTML outputs in order, as a front end without Plotly's extension (or an
    HTML export) shows them; every request leaving the page is refused."""
    pages = [p for c in executed.cells if c.cell_type == "code" for p in data(c, "text/html")]
    (tmp_path / "outputs.html").write_text(
        "<!doctype html><html><head><meta charset='utf-8'></head><body>"
        + "".join(f"<div>{p}</div>" for p in pages)
        + "</body></html>"
    )
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    refused: list[str] = []
    page.route(
        re.compile(r"^(?!file:).*"),
        lambda route: (refused.append(route.request.url), route.abort()),
    )
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto((tmp_path / "outputs.html").as_uri())
    page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot').length >= {len(FIGURES)}")
    drawn = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')]"
        ".map(d => d.querySelectorAll('.main-svg').length > 0 && d.clientHeight > 300)"
    )
    assert drawn == [True] * len(FIGURES)
    assert refused == [] and errors == []
    if os.environ.get("ATTNLENS_NOTEBOOK_SCREENSHOT"):
        page.screenshot(path=os.environ["ATTNLENS_NOTEBOOK_SCREENSHOT"], full_page=True)
    page.close()
