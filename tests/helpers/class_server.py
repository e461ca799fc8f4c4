"""What the live-class browser tests share: a student's result on their page, the class's
histogram total, and `attnlens serve` on one port that outlives a restart."""

from __future__ import annotations

from typing import Any

from helpers.lecture_page import FOLLOWER
from helpers.server import free_port, running, serve_command

RESULT = "#lec_result.ok, #lec_result.no"  # right or not quite, in the slide FOLLOWER draws
HISTOGRAM_TOTAL = """() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  const h = plots.find(p => p.layout && p.layout.title
    && String(p.layout.title.text).includes('the class'));
  return h ? h.data[0].x.reduce((a, b) => a + b, 0) : null;
}"""


def sees_result(page: Any, timeout: int = 30_000) -> None:
    """The student's own result (right or not quite) on the slide their browser draws; else
    fail with what the page shows."""
    try:
        page.frame_locator(FOLLOWER).locator(RESULT).wait_for(timeout=timeout)
    except Exception as err:
        shown = page.evaluate("() => document.body.innerText.slice(0, 1500)")
        raise AssertionError(f"no result on the student's page; it shows:\n{shown}") from err


class Server:
    """`attnlens serve` on one port that outlives a restart (the pages reconnect to it)."""

    def __init__(self, store: str) -> None:
        self.port = free_port()
        self.command = [*serve_command("translate", self.port), "--class-store", store]
        self.url = f"http://127.0.0.1:{self.port}"

    def run(self) -> Any:
        return running(self.command, self.port)
