"""How a student's screen learns that the teacher moved, without running the app every second.

A Streamlit rerun costs 30–60 ms of server CPU even when nothing changed, so polling by rerun
limits a class to a few dozen students on two cores. Instead one thread per process (the board)
copies each followed class's version from the store into a small file, `CODE.json`, in the
folder of a tiny component; the student's browser fetches that file a few times a second (a
static file, no script run) and asks for a rerun only when the version changed. With Redis,
every replica's board reads the same store, so a student follows a teacher on another replica.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attnlens.app.teaching.class_limits import ClassError
from attnlens.app.teaching.class_store import ClassStore
from attnlens.app.teaching.names import normal_code

TICK_SECONDS = 0.1  # how often the board reads the versions of the classes followed here
BROWSER_POLL_MS = 250  # how often a student's browser reads its class's file
FORGET_SECONDS = 120.0  # a class nobody here asked about for this long is no longer read

RETRY_MS = 2000  # a page not redrawn with the new version this long after asking asks again

# The component: no build step, the Streamlit component protocol by hand. It renders nothing,
# fetches CODE.json every `every_ms` and, when the version there differs from the one the page
# was drawn with, sends it as its value (one rerun). A rerun can be lost: a value sent while
# the page's fragment (still_here) runs only reruns the fragment, and the page stays on the
# old slide; so it asks again every RETRY_MS until a redraw brings the version, each time with
# a value Streamlit has not seen (a value equal to the last one would rerun nothing). No file
# at all (404: the server restarted, or forgot the class) also asks for a rerun, once per
# RETRY_MS: the rerun has the server read the class again.
FOLLOW_HTML = """<!doctype html>
<html><body style="margin:0">
<script>
const RETRY_MS = %RETRY_MS%;
let code = null, shown = null, asked = null, askedAt = 0, timer = null;
function send(type, more) {
  window.parent.postMessage(Object.assign({isStreamlitMessage: true, type: type}, more || {}), "*");
}
async function poll() {
  if (!code) return;
  try {
    const reply = await fetch(code + ".json?t=" + Date.now(), {cache: "no-store"});
    if (reply.status === 404 && Date.now() - askedAt > RETRY_MS) {
      // This server does not read the class now (it restarted, or forgot a class nobody
      // asked about): a rerun of the page has it read the class again.
      askedAt = Date.now();
      send("streamlit:setComponentValue", {value: ["unread", askedAt], dataType: "json"});
    }
    if (!reply.ok) return;
    const now = (await reply.json()).version;
    if (now !== shown && (now !== asked || Date.now() - askedAt > RETRY_MS)) {
      asked = now;
      askedAt = Date.now();
      send("streamlit:setComponentValue", {value: [now, askedAt], dataType: "json"});
    }
  } catch (e) { /* the server restarts: try again next time */ }
}
window.addEventListener("message", (event) => {
  const data = event.data || {};
  if (data.type !== "streamlit:render") return;
  code = /^[A-Z0-9]{6}$/.test(data.args.code) ? data.args.code : null;
  shown = data.args.version;
  if (timer) clearInterval(timer);
  timer = setInterval(poll, data.args.every_ms || 400);
});
// Say "ready" until the page answers with the arguments: a ready sent before the page
// listens (an iframe served from the cache loads that fast) would be lost.
function ready() {
  if (timer) return;
  send("streamlit:componentReady", {apiVersion: 1});
  send("streamlit:setFrameHeight", {height: 0});
  setTimeout(ready, 250);
}
ready();
</script>
</body></html>
""".replace("%RETRY_MS%", str(RETRY_MS))


class VersionBoard:
    """The versions of the classes followed in this process, as files in `folder`."""

    def __init__(
        self, store: ClassStore, folder: Path | None = None, forget_seconds: float = FORGET_SECONDS
    ) -> None:
        self.store = store
        self.forget_seconds = forget_seconds
        self.folder = folder or Path(tempfile.mkdtemp(prefix="attnlens-follow-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "index.html").write_text(FOLLOW_HTML, encoding="utf-8")
        self._asked: dict[str, float] = {}  # code -> when a page last asked to follow it
        self._written: dict[str, int] = {}
        self._lock = threading.Lock()
        self._writing = threading.Lock()  # a page's first watch and the thread write one file
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="attnlens-class-board", daemon=True)
        self._thread.start()

    def watch(self, code: str) -> None:
        """Keep the class's file up to date (a page follows it); written at once the first time."""
        code = normal_code(code)
        if not code:
            return
        with self._lock:
            new = code not in self._asked
            self._asked[code] = time.monotonic()
        if new:
            self._refresh(code)

    def _run(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            now = time.monotonic()
            with self._lock:
                gone = [c for c, t in self._asked.items() if now - t > self.forget_seconds]
                for code in gone:
                    del self._asked[code]
                codes = list(self._asked)
            with self._writing:  # not while a page that just asked again writes it
                for code in gone:
                    self._written.pop(code, None)
                    (self.folder / f"{code}.json").unlink(missing_ok=True)
            for code in codes:
                try:
                    self._refresh(code)
                except Exception as err:  # the thread outlives any one failure: were it to
                    # end, every class followed in this process would stop following
                    print(f"attnlens: class {code}: version not read ({err!r})", file=sys.stderr)

    def _refresh(self, code: str) -> None:
        """Write the class's version if it changed (atomically: a reader never sees half), one
        writer at a time: read and written under one lock, a newer version is never overwritten
        by an older one."""
        with self._writing:
            try:
                state = self.store.state(code)
            except ClassError:  # the store is away for a moment: the pages keep their slide
                return
            version = -1 if state is None else state.version
            if self._written.get(code) == version:
                return
            part = self.folder / f".{code}.json.part"
            part.write_text(json.dumps({"version": version}), encoding="utf-8")
            os.replace(part, self.folder / f"{code}.json")
            self._written[code] = version

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def follow_signal(declare: Callable[..., Any], folder: Path) -> Callable[..., Any]:
    """The component that reruns a student's page when its class moves (declared once)."""
    return declare("attnlens_follow", path=str(folder))  # type: ignore[no-any-return]
