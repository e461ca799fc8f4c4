"""What a user sees, timed inside the page: from their action to the chart showing its result.

Every tab carries a probe (PROBE, run before the page's own scripts) that stamps, with the
page's own clock, each key pressed, each character typed, each click and each message the
server sends; and, once per animation frame, whether the charts changed (Plotly's, and the
figures the page draws itself, which count their redraws in data-drawn) and whether the chart
the user waits for shows what they asked for. So a measurement is

    action (key, last typed character, click) → the first frame that shows the result

and nothing of Playwright's own round trips or polling is in it: the bench drives the browser
from Python, but the clock that decides is the page's. The probe keeps watching until neither
a message nor a chart change has come for `quiet` seconds: the last chart change is the full
page redrawn. CDP's Performance metrics give the browser's main-thread CPU for the same span.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tests.helpers.server import CHROMIUM_ARGS

QUIET = 0.6  # seconds without a message or a chart change: the page is done
LIMIT = 60.0  # seconds after which a measurement gives up (reported as not shown)
PROBE_SOURCE = r"""
(() => {
  if (window.__bench) return;
  const B = (window.__bench = { msgs: [], sent: [], keys: {}, typed: 0, clicked: 0 });
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (ev) => {
        const d = ev.data;
        B.msgs.push([performance.now(), d.byteLength ?? d.size ?? d.length ?? 0]);
      });
    }
    send(data) { B.sent.push(performance.now()); return super.send(data); }
  };
  addEventListener("keydown", (e) => { B.keys[e.key] = performance.now(); }, true);
  addEventListener("input", () => { B.typed = performance.now(); }, true);
  addEventListener("click", () => { B.clicked = performance.now(); }, true);
  B.plots = () => Array.from(document.querySelectorAll(".js-plotly-plot"));
  B.grids = () => Array.from(document.querySelectorAll("[data-testid=stBidiComponentIsolated]"),
    (h) => h.shadowRoot && h.shadowRoot.querySelector("[data-drawn]")).filter(Boolean);
  B.watch = (shows, quiet, limit) => new Promise((resolve) => {
    const seen = new Map(B.plots().map((p) => [p, p.data]));
    const redrawn = new Map(B.grids().map((c) => [c, c.dataset.drawn]));
    const start = performance.now();
    const changes = [];
    let shown = null;
    const tick = () => {
      const now = performance.now();
      const plots = B.plots();
      plots.forEach((p) => {
        if (seen.get(p) !== p.data) {
          seen.set(p, p.data);
          const t = p.layout && p.layout.title, kind = p.data[0] ? p.data[0].type : "";
          const title = String((t && t.text) || t || "").replace(/<[^>]*>/g, "");
          changes.push([now, `${kind}: ${title.slice(-40)}`]);
        }
      });
      B.grids().forEach((c) => {
        if (redrawn.get(c) !== c.dataset.drawn) {
          redrawn.set(c, c.dataset.drawn);
          changes.push([now, `canvas: ${c.getAttribute("aria-label")}`]);
        }
      });
      if (shown === null) { try { if (shows(plots)) shown = now; } catch (e) {} }
      const last = Math.max(start, (changes.at(-1) ?? [0])[0], (B.msgs.at(-1) ?? [0])[0]);
      if ((shown !== null && now - last >= quiet) || now - start > limit) {
        resolve({ start, shown, changes, end: now, keys: { ...B.keys }, typed: B.typed,
                  clicked: B.clicked, msgs: B.msgs.filter((m) => m[0] >= start),
                  sent: B.sent.filter((t) => t >= start) });
      } else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  // a first visit: from navigation until every chart is drawn and the page is quiet
  const drawn = (plots) => plots.length > 0 && plots.every((p) => p.data);
  B.loaded = new Promise((resolve) => addEventListener("DOMContentLoaded", () =>
    B.watch(drawn, QUIET_MS, LIMIT_MS).then(resolve)));
})();
"""
PROBE = PROBE_SOURCE.replace("QUIET_MS", str(QUIET * 1000)).replace("LIMIT_MS", str(LIMIT * 1000))


@dataclass(frozen=True)
class Timing:
    """One action, in seconds from the action (None: never shown within LIMIT)."""

    shown: float | None  # the chart the user waits for shows the result
    full: float  # the last chart changed (the whole page redrawn)
    first_message: float | None  # the server's first message after the action
    browser_cpu: float  # main-thread CPU of the tab from the action until the page was quiet
    server_cpu: float  # CPU of the server process over the same span
    received: int  # bytes the server sent
    charts: tuple[tuple[str, float], ...]  # each chart's title and when it last changed
    requests: tuple[float, ...]  # when the page sent the server something (reruns, …)
    chart_message: float | None = None  # the message that brought the result (_brought)


def x_labels_are(options: Sequence[Sequence[str]], index: int = 0) -> str:
    """A page predicate: chart `index`'s first trace has exactly one of these x labelings."""
    wanted = json.dumps(
        [json.dumps(list(o), ensure_ascii=False, separators=(",", ":")) for o in options]
    )
    return (
        f"(plots) => {{ const p = plots[{index}]; if (!(p && p.data)) return false;"
        f" return {wanted}.includes(JSON.stringify(p.data[0].x)); }}"
    )


def title_has(*parts: str, index: int = 0) -> str:
    """A page predicate: chart `index`'s title contains every part."""
    wanted = json.dumps(list(parts), ensure_ascii=False)
    return (
        f"(plots) => {{ const p = plots[{index}]; const t = p && p.layout && p.layout.title;"
        f" const s = typeof t === 'string' ? t : (t && t.text) || '';"
        f" return {wanted}.every((w) => s.includes(w)); }}"
    )


def drawn_text_has(selector: str, *parts: str) -> str:
    """A page predicate: the element at `selector` in a figure the page draws itself
    (app/web/) has text containing every part."""
    where, wanted = json.dumps(selector), json.dumps(list(parts), ensure_ascii=False)
    return (
        "() => Array.from(document.querySelectorAll('[data-testid=stBidiComponentIsolated]'))"
        f".some((h) => {{ const e = h.shadowRoot && h.shadowRoot.querySelector({where});"
        f" return Boolean(e) && {wanted}.every((w) => e.textContent.includes(w)); }})"
    )


def launch(playwright: Any) -> Any:
    """Debian's Chromium (never a downloaded browser), headless."""
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("the browser benchmarks need Debian's chromium (apt-get install chromium)")
    return playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)


class Tab:
    """One browser tab (its own context) on one server, with the probe installed."""

    def __init__(self, browser: Any, server: Any, width: int = 1400, height: int = 1000) -> None:
        self.server = server
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.context.add_init_script(PROBE)
        self.page = self.context.new_page()
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("Performance.enable")

    def open(self, query: str, timeout: float = 90.0, ready: str | None = None) -> float:
        """Go to the server's page with this query string and wait until its charts are drawn
        and the page is quiet; returns the seconds from navigation to the last chart drawn
        (a first visit, when the server has the model loaded already). ready: for a page that
        shows no chart until asked, a page predicate saying it is drawn (on the page's clock
        too: performance.now() counts from navigation)."""
        self.page.goto(f"{self.server.url}/?{query}", timeout=timeout * 1000)
        if ready is None:
            loaded = self.page.evaluate("() => window.__bench.loaded")
        else:
            loaded = self.page.evaluate(
                f"() => window.__bench.watch({ready}, {QUIET * 1000}, {LIMIT * 1000})"
            )
        if loaded["shown"] is None:
            raise RuntimeError(f"{self.server.url}/?{query} was not drawn in {LIMIT:.0f} s")
        return float(max([loaded["shown"], *(t for t, _ in loaded["changes"])])) / 1000

    def _task_seconds(self) -> float:
        metrics = self.cdp.send("Performance.getMetrics")["metrics"]
        return float(next(m["value"] for m in metrics if m["name"] == "TaskDuration"))

    def measure(self, act: Callable[[], None], shows: str, since: str) -> Timing:
        """Do `act` and time it: `shows` is a page predicate over the charts (x_labels_are,
        title_has), `since` which stamp starts the clock: "Enter", "ArrowRight", … (a key),
        "typed" (the last character typed) or "clicked"."""
        self.page.bring_to_front()  # a background tab's animation frames are throttled
        self.page.evaluate(
            f"() => {{ window.__done = window.__bench.watch({shows}, {QUIET * 1000},"
            f" {LIMIT * 1000}); }}"
        )
        cpu, task = self.server.cpu_seconds(), self._task_seconds()
        act()
        r = self.page.evaluate("() => window.__done")
        server_cpu, browser_cpu = self.server.cpu_seconds() - cpu, self._task_seconds() - task
        t0 = r[since] if since in ("typed", "clicked") else r["keys"][since]
        msgs = r["msgs"]
        after = [m[0] for m in msgs if m[0] >= t0]

        def since_t0(t: float | None) -> float | None:
            return None if t is None else (t - t0) / 1000

        return Timing(
            shown=since_t0(r["shown"]),
            full=float(since_t0(max([r["shown"] or t0, *(t for t, _ in r["changes"])])) or 0.0),
            first_message=since_t0(after[0]) if after else None,
            browser_cpu=browser_cpu,
            server_cpu=server_cpu,
            received=sum(int(m[1]) for m in msgs),
            charts=_chart_times(r["changes"], t0),
            requests=tuple((t - t0) / 1000 for t in r["sent"]),
            chart_message=since_t0(_brought(msgs, r["shown"], t0)),
        )

    def close(self) -> None:
        self.context.close()


def _brought(msgs: list[list[float]], shown: float | None, t0: float) -> float | None:
    """When the message that brought the chart arrived (page clock): the largest between the
    action and the frame that showed the result (a chart's message is far larger than a
    widget's; a message that came later, while the chart was drawn, is not it)."""
    before = [m for m in msgs if shown is not None and t0 <= m[0] <= shown]
    return max(before, key=lambda m: m[1])[0] if before else None


def _chart_times(changes: list[list[Any]], t0: float) -> tuple[tuple[str, float], ...]:
    """(title, seconds from t0 to its last change) of every chart that changed, in order."""
    last: dict[str, float] = {}
    for t, title in changes:
        last[str(title)] = (t - t0) / 1000
    return tuple(sorted(last.items(), key=lambda item: item[1]))
