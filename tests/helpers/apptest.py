"""Opening the app's pages in Streamlit's AppTest, on a folder of ours or a bundled model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from attnlens.model.lenses.registry import bundled_models

APP_SCRIPT = str(Path(__file__).resolve().parents[2] / "app" / "web" / "main.py")


def open_on(model_dir: Path, page: str, **params: str) -> AppTest:
    """A page of the app run once, the session's default model a folder of ours."""
    at = AppTest.from_file(APP_SCRIPT, default_timeout=60)
    at.session_state["default_model"] = str(model_dir)
    at.query_params.update({"page": page, **params})
    return at.run()


def require_bundled(*names: str) -> None:
    """Skip the test unless every named model is bundled (a bare clone has none trained)."""
    missing = set(names) - {entry.name for entry in bundled_models()}
    if missing:
        pytest.skip(f"not bundled yet: {', '.join(sorted(missing))}")


def open_bundled(page: str, model_name: str, timeout: float = 60, **params: str) -> AppTest:
    """A page of the app run once on a bundled model (the test is skipped if it is missing)."""
    require_bundled(model_name)
    at = AppTest.from_file(APP_SCRIPT, default_timeout=timeout)
    at.query_params.update({"page": page, "model": model_name, **params})
    return at.run()


def figures(at: AppTest) -> list[dict[str, Any]]:
    """Every Plotly figure on the page, as its JSON, in page order."""
    return [json.loads(element.proto.spec) for element in at.get("plotly_chart")]


def titles(at: AppTest) -> list[str]:
    """The titles of the page's Plotly figures ("" for one without), a subtitle after a <br>."""
    return [title_of(spec) for spec in figures(at)]


def title_of(spec: dict[str, Any]) -> str:
    """A figure's title as read: its text, and its subtitle after a <br> when it has one."""
    title = spec["layout"].get("title", {})
    text, subtitle = str(title.get("text", "")), title.get("subtitle", {}).get("text")
    return f"{text}<br>{subtitle}" if subtitle else text


def chart(at: AppTest, title_part: str, *, at_start: bool = False) -> dict[str, Any]:
    """The first figure whose title contains title_part (begins with it, with at_start)."""
    for spec in figures(at):
        title = title_of(spec)
        if title.startswith(title_part) if at_start else title_part in title:
            return spec
    raise AssertionError(f"no figure titled ...{title_part!r}... in {titles(at)}")


def drawn_by_browser(at: AppTest, name: str) -> list[dict[str, Any]]:
    """The payload of every component `name` on the page (app/web/components.py), in page order."""
    found = at.get("bidi_component")
    return [json.loads(e.proto.json) for e in found if e.proto.component_name == name]


def head_grids(at: AppTest) -> list[dict[str, Any]]:
    """The payload of every every-head grid on the page (app/web/explore/grid_canvas.py)."""
    return drawn_by_browser(at, "attnlens_head_grid")


def lines_views(at: AppTest) -> list[dict[str, Any]]:
    """The payload of every lines view drawn by the browser (app/web/explore/lines_canvas.py)."""
    return drawn_by_browser(at, "attnlens_lines")


def step_views(at: AppTest) -> list[dict[str, Any]]:
    """The payload of every step-through drawn by the browser (app/web/decode/step_view.py)."""
    return drawn_by_browser(at, "attnlens_steps")


def open_lecture(**params: str) -> AppTest:
    """The lecture page run once (translate, the deck's model, must be bundled)."""
    require_bundled("translate")
    at = AppTest.from_file(APP_SCRIPT, default_timeout=120)
    at.query_params.update({"page": "lecture", **params})
    return at.run()


def no_errors(at: AppTest) -> None:
    """The page ran without an exception or an error message."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def slide_counter(at: AppTest) -> str:
    """The lecture's "4 / 15" in the corner."""
    return next(m.value for m in at.markdown if " / " in m.value and m.value[0].isdigit())
