"""An experiment beside a class: does one experiment running slow other visitors' keystrokes?

One `attnlens serve` in server mode (ATTNLENS_SERVER_MODE=1) with an empty experiment cache. A
session types into Explore on `--model`, one new text a second: first with the server idle, then
while a second session runs an experiment on the Experiments page (it presses Run as a visitor
does). The p95 of keystroke → heatmap in each, and their ratio, target ≤ 1.3 (issue 39); the load
average is printed beside, since other jobs on the machine move both numbers.

    .venv/bin/python -m bench.experiment_load [--model reverse] [--experiment importance]
        [--keystrokes 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import tempfile
import time

from streamlit.proto.BackMsg_pb2 import BackMsg

from attnlens.viz.shared.labels import position_labels
from bench.load_check import percentile, text_for
from bench.servers import Server, started
from tests.helpers.server import free_port, serve_command

TARGET_RATIO = 1.3
KEYSTROKES = 20


async def typed(server: Server, model: str, keystrokes: int, seed: int) -> list[float]:
    """Seconds from each keystroke to its heatmap, one keystroke a second."""
    from bench.session import Session

    session = Session(server.url, {"page": "explore", "model": model})
    await session.open()
    rng, out = random.Random(seed), []
    for _ in range(keystrokes):
        started_at = time.perf_counter()
        text = text_for(rng)
        took = await session.type_text(text, position_labels([*text, "</s>"]))
        out.append(float("inf") if took is None else took)
        await asyncio.sleep(max(0.0, 1.0 - (time.perf_counter() - started_at)))
    await session.close()
    return out


async def press_run(server: Server, model: str, experiment: str) -> object:
    """A session on the Experiments page that has pressed Run (its run goes on in the server)."""
    from bench.session import Session

    session = Session(server.url, {"page": "experiments", "model": model, "experiment": experiment})
    found: list[str] = []
    note = session._note

    def keep_run_button(msg: object) -> None:
        note(msg)  # type: ignore[arg-type]
        delta = getattr(msg, "delta", None)
        if delta is not None and delta.WhichOneof("type") == "new_element":
            element = delta.new_element
            if element.WhichOneof("type") == "button" and element.button.label == "Run":
                found.append(element.button.id)

    session._note = keep_run_button  # type: ignore[method-assign]
    await session.open()
    if not found:
        raise RuntimeError(f"no Run button on the {experiment} page of {model} (cached?)")
    back = BackMsg()
    back.rerun_script.query_string = session.query_string
    widget = back.rerun_script.widget_states.widgets.add()
    widget.id, widget.trigger_value = found[0], True
    await session.ws.send(back.SerializeToString())
    return session


async def measure(server: Server, model: str, experiment: str, keystrokes: int) -> None:
    await typed(server, model, 2, 0)  # load the model, warm the page
    idle = await typed(server, model, keystrokes, 1)
    cpu = server.cpu_seconds()
    runner = await press_run(server, model, experiment)
    await asyncio.sleep(3.0)  # the run under way (it loads nothing: the model is loaded)
    wall = time.perf_counter()
    busy = await typed(server, model, keystrokes, 2)
    wall, cpu = time.perf_counter() - wall, server.cpu_seconds() - cpu
    load = os.getloadavg()
    inbox = runner.inbox  # type: ignore[attr-defined]
    kinds = [inbox.get_nowait()[1].WhichOneof("type") for _ in range(inbox.qsize())]
    running = "script_finished" not in kinds
    await runner.close()  # type: ignore[attr-defined]
    p_idle, p_busy = percentile(idle, 0.95), percentile(busy, 0.95)
    print(
        f"experiment load: `attnlens serve --model {model}` (ATTNLENS_SERVER_MODE=1), "
        f"{os.cpu_count()} cores, {keystrokes} keystrokes each, one a second\n"
        f"  idle:                    p95 {p_idle:.3f} s (median {percentile(idle, 0.5):.3f} s)\n"
        f"  with {experiment} running: p95 {p_busy:.3f} s (median {percentile(busy, 0.5):.3f} s);"
        f" server CPU {cpu / wall * 100:.0f}% over the typing; the run "
        f"{'still ran at the last keystroke' if running else 'ENDED before the last keystroke'}\n"
        f"  ratio {p_busy / p_idle:.2f} (target ≤ {TARGET_RATIO:g}); load average "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="reverse")
    parser.add_argument("--experiment", default="importance")
    parser.add_argument("--keystrokes", type=int, default=KEYSTROKES)
    args = parser.parse_args(argv)
    port = free_port()
    with tempfile.TemporaryDirectory() as cache:
        env = {"ATTNLENS_SERVER_MODE": "1", "ATTNLENS_CACHE_DIR": cache}
        with started("attnlens", serve_command(args.model, port), port, env=env) as server:
            asyncio.run(measure(server, args.model, args.experiment, args.keystrokes))


if __name__ == "__main__":
    main()
