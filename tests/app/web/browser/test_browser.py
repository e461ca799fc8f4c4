"""The app in a real browser: Playwright drives Debian's Chromium against `attnlens serve`.

Playwright never downloads a browser here: it launches the system's `chromium`.
(The README's screenshots come from test_browser_figures.py.)
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from attnlens.app.web import resources as state
from attnlens.viz.shared.labels import position_labels
from helpers.apptest import require_bundled
from helpers.memory import served
from helpers.server import command_of, descendants

pytestmark = pytest.mark.browser
# How long a page load or a rerun may take: on two cores at a load average of 30 the first
# heatmap of a new tab took over 30 s. A wait on a condition ends as soon as it holds.
RERUN_MS = 120_000
HEATMAP_X = (
    "() => { const p = document.querySelector('.js-plotly-plot');"
    " return p && p.data ? JSON.stringify(p.data[0].x) : null; }"
)


def click_thumbnail(page: Any, layer: int, head: int) -> None:
    """Click the centre of one thumbnail of the every-head grid (its canvas says where they are:
    test_browser_head_grid.py tests it further)."""
    canvas = page.locator("[data-testid=stBidiComponentIsolated] canvas.hg-canvas[data-drawn]")
    canvas.scroll_into_view_if_needed()
    g = json.loads(canvas.get_attribute("data-geometry"))
    at = {"x": g["left"] + head * g["pitch"] + g["tileW"] / 2,
          "y": g["top"] + layer * g["pitchY"] + g["tileH"] / 2}  # fmt: skip
    canvas.click(position=at)


def heatmap_shows(labels: list[str]) -> str:
    """A page function true once the first heatmap's key labels are exactly these."""
    return f"() => ({HEATMAP_X})() === JSON.stringify({json.dumps(labels)})"


HEATMAP_TITLE_HAS = (
    "() => {{ const p = document.querySelector('.js-plotly-plot');"
    " return !!(p && p.layout && p.layout.title.text.includes({})); }}"
)


def explore_on_bad(
    browser: Any, server: str, sent: list[bytes] | None = None, **options: Any
) -> Any:
    """A new tab on Explore with the text "bad", once its heatmap is drawn; what the page
    sends the server is added to `sent` (websocket frames)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, **options)
    if sent is not None:
        page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    page.goto(f"{server}/?text=bad", timeout=RERUN_MS)
    page.wait_for_function(HEATMAP_X, timeout=RERUN_MS)
    return page


def test_explore_renders_a_chart_that_follows_the_text(
    browser: Any, server: str, tmp_path: Path
) -> None:
    sent: list[bytes] = []
    page = explore_on_bad(browser, server, sent)
    before = json.loads(page.evaluate(HEATMAP_X))
    assert before == position_labels(["b", "a", "d", "</s>"])
    sent.clear()
    box = page.get_by_label("Text", exact=True)
    box.fill("cafe")
    box.press("Enter")
    expected = position_labels(["c", "a", "f", "e", "</s>"])
    page.wait_for_function(heatmap_shows(expected), timeout=RERUN_MS)
    # a new text reruns Explore's fragment alone, not the page (the sidebar, navigation and
    # title are not sent again: bench/app_latency.py), and the URL still follows the text
    reruns = [m.rerun_script for m in map(back_message, sent) if m.HasField("rerun_script")]
    assert len(reruns) == 1 and reruns[0].fragment_id
    page.wait_for_function("() => location.search.includes('text=cafe')", timeout=RERUN_MS)
    page.wait_for_timeout(1000)  # let the rest of the page settle after the rerun
    shot = tmp_path / "explore.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    click_thumbnail(page, 0, 0)
    enlarged = HEATMAP_TITLE_HAS.format(json.dumps("layer 0 · head 0"))
    page.wait_for_function(enlarged, timeout=RERUN_MS)
    page.wait_for_timeout(300)
    assert page.locator("[data-testid='stException']").count() == 0
    dark = explore_on_bad(browser, server, color_scheme="dark")
    background = "() => document.querySelector('.js-plotly-plot').layout.plot_bgcolor"
    assert dark.evaluate(background) == "rgba(0,0,0,0)"  # no white box on a dark page


def back_message(frame: bytes | str) -> Any:
    """What the page sent the server, decoded (Streamlit's BackMsg protobuf)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    msg.ParseFromString(frame if isinstance(frame, bytes) else frame.encode())
    return msg


def test_the_heatmap_follows_typing_without_enter(browser: Any, server: str) -> None:
    """A pause in typing reruns the page; typing goes on in the same box without losing keys."""
    page = explore_on_bad(browser, server)
    box = page.get_by_label("Text", exact=True)
    box.click()
    box.press("End")
    page.keyboard.type("ge", delay=60)  # no Enter, no leaving the box
    page.wait_for_function(heatmap_shows(position_labels([*"badge", "</s>"])), timeout=RERUN_MS)
    page.keyboard.type("d", delay=60)  # the box kept focus and caret through the rerun
    page.wait_for_function(heatmap_shows(position_labels([*"badged", "</s>"])), timeout=RERUN_MS)
    assert box.input_value() == "badged"
    assert page.locator("[data-testid='stException']").count() == 0


STALE_BOX = """async (focused) => {
  const box = [...document.querySelectorAll('.st-key-w_text')].pop();  // the last drawn
  const input = box.querySelector('input, textarea');
  if (focused) input.focus(); else input.blur();
  box.setAttribute('data-stale', 'true');  // what Streamlit marks while a rerun is under way
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const out = [getComputedStyle(box).display, document.activeElement === input];
  box.setAttribute('data-stale', 'false');
  return out;
}"""


def test_a_box_being_typed_in_keeps_the_focus_while_its_run_is_under_way(
    browser: Any, server: str
) -> None:
    """The greyed box of the last run is hidden (app/web/sidebar.py's PAGE_CSS), but not the one
    the user is typing in: a focused input hidden with display: none lost the focus, and keys
    typed after the pause went nowhere (1 run in 4-8 of the test above, when the box was marked
    stale before the rerun drew it again)."""
    page = explore_on_bad(browser, server)
    assert page.evaluate(STALE_BOX, True) == ["block", True]
    assert page.evaluate(STALE_BOX, False) == ["none", False]
    # a text grown past 200 characters swaps the box for a text area under the same key: the
    # swapped-out box (it held the focus) goes once its successor is drawn before it
    successor = """() => { const box = document.querySelector('.st-key-w_text');
      const next = box.cloneNode(true); next.setAttribute('data-stale', 'false');
      box.before(next); }"""
    page.evaluate(successor)
    assert page.evaluate(STALE_BOX, True)[0] == "none"
    page.close()


def test_the_server_starts_a_trace_worker_by_default(browser: Any) -> None:
    """`attnlens serve` as a user starts it (the tests' own servers are told 0): on two cores
    or more it starts one trace worker (and stops it with itself), and the page draws what the
    server drew before, whether a trace came from the server or, once started, the worker."""
    require_bundled("reverse")
    wanted = state.default_trace_workers(os.cpu_count())
    if not wanted:
        pytest.skip("one core: the server makes its traces itself")
    with served("reverse", {"ATTNLENS_TRACE_WORKERS": ""}) as (url, pid):  # not set: default
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/?page=explore&model=reverse&text=abc", timeout=RERUN_MS)
        page.wait_for_function(heatmap_shows(position_labels(["a", "b", "c", "</s>"])),
                               timeout=RERUN_MS)  # fmt: skip
        box = page.get_by_label("Text", exact=True)
        box.fill("xyz")
        box.press("Enter")
        page.wait_for_function(heatmap_shows(position_labels(["x", "y", "z", "</s>"])),
                               timeout=RERUN_MS)  # fmt: skip
        assert page.get_by_text("Output: zyx").count() == 1
        assert page.locator("[data-testid='stException']").count() == 0
        workers = [p for p in descendants(pid) if b"spawn_main" in command_of(p)]
        assert len(workers) == wanted == 1, "one trace worker, started by the server"
        page.close()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{workers[0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not Path(f"/proc/{workers[0]}").exists(), "the worker outlived its server"
