"""Progress bars where people look for them: tqdm's notebook bar in Jupyter (JupyterLab, VS
Code), a plain bar in a terminal, and none in CI logs or in output sent to a file.

Long work (training, evaluation, experiments, large exports) asks `bar(...)` for its bar and
the place it runs in decides the kind; `enabled=False` (the `progress` flags) turns it off.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Literal, TextIO, TypeVar

from tqdm.std import tqdm as plain_tqdm

Where = Literal["notebook", "terminal", "none"]
OFF_VALUES = {"", "0", "false", "no", "off"}
T = TypeVar("T")


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (not a terminal IPython, not qtconsole)."""
    if "ipykernel" not in sys.modules:
        return False
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    return type(shell).__name__ == "ZMQInteractiveShell"


def where(
    env: Mapping[str, str] | None = None,
    stream: TextIO | None = None,
    notebook: bool | None = None,
    widgets: bool | None = None,
) -> Where:
    """Which bar suits the place this runs in: none under CI (the CI variable, set by every CI
    service) or when the output is not a terminal; the notebook bar in Jupyter when ipywidgets
    can draw it, else a plain one (it prints to the cell's output)."""
    env = os.environ if env is None else env
    if env.get("CI", "").strip().lower() not in OFF_VALUES:
        return "none"
    if in_notebook() if notebook is None else notebook:
        has_widgets = importlib.util.find_spec("ipywidgets") is not None
        return "notebook" if (has_widgets if widgets is None else widgets) else "terminal"
    stream = sys.stderr if stream is None else stream
    return "terminal" if stream.isatty() else "none"


def bar(
    iterable: Iterable[T] | None = None,
    total: int | None = None,
    desc: str = "",
    enabled: bool = True,
    unit: str = "it",
) -> plain_tqdm[T]:
    """A tqdm bar of the kind `where()` picks (a disabled one when enabled is False)."""
    kind = where() if enabled else "none"
    cls = plain_tqdm
    if kind == "notebook":
        from tqdm.notebook import tqdm as notebook_tqdm

        cls = notebook_tqdm
    return cls(iterable, total=total, desc=desc, unit=unit, disable=kind == "none")
