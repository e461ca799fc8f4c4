"""Figures in notebooks, offline: `attnlens.notebook_mode()` once at the top of a notebook.

Plotly's default in a Jupyter kernel sends each figure as its JSON only, which JupyterLab draws
only when its Plotly extension is installed beside the Jupyter server, and classic front ends
and exported HTML not at all. notebook_mode puts plotly.js into the notebook once (in the
output of the cell that calls it; nothing is fetched from a CDN), and from then on shows every
figure twice over: as Plotly's JSON, which JupyterLab's Plotly extension and VS Code draw with
their own plotly.js, and as HTML drawn by the copy in the notebook, for every other front end
and for the notebook exported as HTML. Only Plotly's renderer for this kernel changes.
"""

from __future__ import annotations

import html
from typing import Any

from attnlens.record.errors import InputError

RENDERER = "attnlens_offline"
FIGURE_HEIGHT = 525  # pixels, as Plotly's notebook renderer draws a figure without a height


def plotly_js() -> tuple[str, str]:
    """(version, source) of the plotly.js bundled with the installed plotly package."""
    from plotly.offline import get_plotlyjs, get_plotlyjs_version

    return str(get_plotlyjs_version()), str(get_plotlyjs())


def loader_html() -> str:
    """The plotly.js source in a script, and a line saying figures draw offline."""
    version, source = plotly_js()
    note = html.escape(f"attnlens: plotly.js {version} is in this notebook; figures draw offline")
    return (
        "<script>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>"
        f"<script type='text/javascript'>{source}</script>"
        f"<div style='font-size:small;color:gray'>{note}</div>"
    )


def figure_bundle(fig_dict: dict[str, Any]) -> dict[str, Any]:
    """One figure as Plotly's JSON and as HTML that needs the notebook's plotly.js (no URL)."""
    from plotly.io import to_html
    from plotly.io._base_renderers import PlotlyRenderer

    bundle: dict[str, Any] = PlotlyRenderer().to_mimebundle(dict(fig_dict))
    bundle["text/html"] = to_html(
        fig_dict, include_plotlyjs=False, include_mathjax=False, full_html=False,
        default_width="100%", default_height=FIGURE_HEIGHT, validate=False,
    )  # fmt: skip
    return bundle


def _renderer() -> Any:
    from plotly.io.base_renderers import MimetypeRenderer

    class OfflineNotebookRenderer(MimetypeRenderer):  # type: ignore[misc]
        """Plotly's JSON and HTML for the plotly.js that notebook_mode put in the notebook."""

        def to_mimebundle(self, fig_dict: dict[str, Any]) -> dict[str, Any]:
            return figure_bundle(fig_dict)

    return OfflineNotebookRenderer()


def notebook_mode() -> None:
    """Draw figures in this notebook offline: plotly.js goes into this cell's output once, and
    every figure after it shows in Jupyter, JupyterLab, VS Code and exported HTML."""
    import plotly.io as pio

    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        raise InputError("notebook_mode is for Jupyter notebooks: IPython is missing") from None
    if get_ipython() is None:
        raise InputError("notebook_mode is for Jupyter notebooks; this is not one")
    pio.renderers[RENDERER] = _renderer()
    pio.renderers.default = RENDERER
    display(HTML(loader_html()))
