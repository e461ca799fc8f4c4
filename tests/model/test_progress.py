"""Progress bars where people look: a notebook bar in Jupyter, a plain bar in a terminal, none
in CI logs or in output sent to a file."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest

from attnlens.model.progress import bar, where

SCRIPT = (
    "from attnlens.model.progress import bar\nfor _ in bar(range(3), desc='counting'):\n    pass\n"
)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("env", "tty", "notebook", "widgets", "expected"),
    [
        ({}, True, False, False, "terminal"),
        ({}, False, False, False, "none"),  # output sent to a file or a pipe
        ({"CI": "true"}, True, False, False, "none"),
        ({"CI": "1"}, False, True, True, "none"),  # a notebook executed in CI
        ({"CI": "false"}, True, False, False, "terminal"),
        ({}, False, True, True, "notebook"),
        ({}, False, True, False, "terminal"),  # no ipywidgets: a plain bar in the cell
    ],
)
def test_the_place_picks_the_bar(
    env: dict[str, str], tty: bool, notebook: bool, widgets: bool, expected: str
) -> None:
    stream = Terminal() if tty else io.StringIO()
    assert where(env, stream, notebook, widgets) == expected


def test_a_bar_switched_off_shows_nothing_anywhere() -> None:
    shown = bar(range(3), enabled=False)
    assert shown.disable and list(shown) == [0, 1, 2]


def _run(env: dict[str, str], terminal: bool) -> str:
    """SCRIPT's standard error, on a 100-column terminal or a pipe."""
    env = {**{k: v for k, v in os.environ.items() if k != "CI"}, **env}
    if not terminal:
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True)
        return done.stderr.decode()
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    process = subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stderr=side)
    os.close(side)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait()
    os.close(main)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.slow  # three interpreters importing attnlens: 3-10 s
def test_a_terminal_shows_a_plain_bar_and_ci_or_a_log_file_none() -> None:
    assert "counting: 100%" in _run({}, terminal=True)
    assert "counting" not in _run({"CI": "true"}, terminal=True)
    assert "counting" not in _run({}, terminal=False)
