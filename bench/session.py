"""One browser session as the server sees it: Streamlit's websocket protocol, spoken from Python.

A browser tab on a Streamlit app is, to the server, a websocket on /_stcore/stream that sends
"rerun the script with these widget values" (a BackMsg) and receives the page as a stream of
deltas (ForwardMsgs). This client does exactly that, with Streamlit's own protobuf messages:
it opens the page, finds the text box, and types into it; each keystroke's latency is from
sending the new text to receiving the heatmap that shows it. What it leaves out is the
browser's drawing, which in a class happens on each student's own machine.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlparse

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

SPEC_LIMIT = 400_000  # bytes: larger charts are never the heatmap of a short text


@dataclass
class Session:
    """A page of the app, open over one websocket."""

    url: str
    query: dict[str, str]
    ws: Any = None
    text_box: str | None = None  # the widget id of the "Text" box
    query_string: str = ""
    received: int = 0  # bytes
    inbox: asyncio.Queue[tuple[float, ForwardMsg]] = field(default_factory=asyncio.Queue)
    reader: asyncio.Task[None] | None = None

    async def open(self, timeout: float = 120.0) -> None:
        """Connect and run the page once; returns when its first run has finished."""
        from websockets.asyncio.client import connect

        parts = urlparse(self.url)
        self.ws = await connect(
            f"ws://{parts.netloc}/_stcore/stream",
            subprotocols=["streamlit"],  # type: ignore[list-item]
            origin=f"http://{parts.netloc}",  # type: ignore[arg-type]
            max_size=None,
        )
        self.reader = asyncio.create_task(self._read())
        self.query_string = urlencode(self.query)
        await self._rerun([])
        await self._until_finished(timeout)

    async def _read(self) -> None:
        async for data in self.ws:
            self.received += len(data)
            msg = ForwardMsg.FromString(data)
            await self.inbox.put((time.perf_counter(), msg))

    async def _rerun(self, widgets: list[tuple[str, str]]) -> None:
        back = BackMsg()
        state = back.rerun_script
        state.query_string = self.query_string
        for widget_id, value in widgets:
            w = state.widget_states.widgets.add()
            w.id, w.string_value = widget_id, value
        await self.ws.send(back.SerializeToString())

    def _note(self, msg: ForwardMsg) -> None:
        """Keep what a browser keeps: the query string the app sets, the text box's id."""
        kind = msg.WhichOneof("type")
        if kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            if element.WhichOneof("type") == "text_input" and element.text_input.label == "Text":
                self.text_box = element.text_input.id

    async def _until_finished(self, timeout: float) -> float:
        deadline = time.perf_counter() + timeout
        while True:
            at, msg = await asyncio.wait_for(self.inbox.get(), deadline - time.perf_counter())
            self._note(msg)
            if msg.WhichOneof("type") == "script_finished":
                return at

    async def type_text(self, text: str, labels: list[str], timeout: float = 60.0) -> float | None:
        """Send text as the box's new value; seconds until a chart whose first trace has these
        x labels arrives (None: the run finished, or timed out, without it)."""
        if self.text_box is None:
            raise RuntimeError(f"no text box named 'Text' on {self.url}?{self.query_string}")
        while not self.inbox.empty():  # whatever the last run still sent
            self._note(self.inbox.get_nowait()[1])
        start = time.perf_counter()
        await self._rerun([(self.text_box, text)])
        deadline, ours = start + timeout, False  # ours: our run has started (new_session)
        while time.perf_counter() < deadline:
            try:
                at, msg = await asyncio.wait_for(self.inbox.get(), deadline - time.perf_counter())
            except TimeoutError:
                return None
            self._note(msg)
            kind = msg.WhichOneof("type")
            ours = ours or kind == "new_session"
            if ours and _chart_x(msg) == labels:
                return at - start
            if ours and kind == "script_finished":
                return None
        return None

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
        if self.ws is not None:
            await self.ws.close()


def _chart_x(msg: ForwardMsg) -> list[str] | None:
    """The first trace's x labels of a Plotly chart delta (None for anything else)."""
    if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return None
    element = msg.delta.new_element
    if element.WhichOneof("type") != "plotly_chart" or len(element.plotly_chart.spec) > SPEC_LIMIT:
        return None
    data = json.loads(element.plotly_chart.spec).get("data") or [{}]
    x = data[0].get("x")
    return x if isinstance(x, list) else None
