"""A served app's memory, read from /proc: its RSS now and at its peak, and driving browser
sessions through Explore on a long text (used by the memory test and bench/memory_load.py)."""

from __future__ import annotations

import contextlib
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .server import free_port, serve_command, started

WORDS = ("the", "cat", "sat", "on", "mat", "and", "a", "dog", "saw", "it")
HEATMAP_READY = (  # the Plotly heatmap, or past 256 positions the head's overview canvas
    "() => { const p = document.querySelector('.js-plotly-plot');"
    " if (p && p.data && p.data[0].x && p.data[0].x.length >= {n}) return true;"
    " return [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')].some((h) =>"
    " { const c = h.shadowRoot && h.shadowRoot.querySelector('canvas.hz-canvas[data-drawn]');"
    " return !!c && JSON.parse(c.dataset.window).cols[1] >= {n}; }); }"
)


def long_text(words: int = 508) -> str:
    """One-token words for MiniLM: 508 of them make 510 tokens with [CLS] and [SEP]."""
    return " ".join(WORDS[i % len(WORDS)] for i in range(words))


def status(pid: int | str, field: str) -> int:
    """A field of /proc/PID/status in bytes: VmRSS (now) or VmHWM (peak); pid "self" is this
    process."""
    match = re.search(rf"{field}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(match.group(1)) * 1024 if match else 0


def reset_peak(pid: int | str) -> None:
    """Start the peak RSS (VmHWM) again from the current RSS."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def own_peak() -> int:
    """This process's peak RSS (VmHWM) in bytes."""
    return status("self", "VmHWM")


def reset_own_peak() -> bool:
    """Start this process's peak RSS again; False where the kernel does not let it."""
    try:
        reset_peak("self")
    except OSError:
        return False
    return True


@contextlib.contextmanager
def served(model: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, int]]:
    """`attnlens serve --model MODEL` on a free port: (url, pid). `serve` execs Streamlit in
    its own process, so the pid is the server's."""
    port = free_port()
    with started(serve_command(model, port), port, env) as proc:
        yield f"http://127.0.0.1:{port}", proc.pid


def explore_url(url: str, model: str, text: str) -> str:
    return f"{url}/?" + urllib.parse.urlencode({"page": "explore", "model": model, "text": text})


async def open_explore(browser: Any, url: str, model: str, text: str, tokens: int) -> Any:
    """A new browser session on Explore, returned once the heatmap shows `tokens` keys."""
    context = await browser.new_context(viewport={"width": 1300, "height": 900},
                                        accept_downloads=True)  # fmt: skip
    page = await context.new_page()
    await page.goto(explore_url(url, model, text), timeout=600_000)
    await page.wait_for_function(HEATMAP_READY.replace("{n}", str(tokens)), timeout=600_000)
    return context
