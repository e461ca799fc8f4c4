"""`--out` replaces a file whole: a command killed while writing leaves the earlier file as it
was (the issue found 220 MB of invalid JSON where a valid record had been)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attnlens.app.cli.main import main
from attnlens.record.trace import Trace
from helpers.tiny import LONG_LM_POSITIONS

# every position the long model reads, with its start token: a CSV of about 106 MB
LONG_TEXT = "ab" * ((LONG_LM_POSITIONS - 1) // 2)


def partial(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f".{name}.*.part"))


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_command_killed_while_writing_leaves_the_old_file_whole(
    long_lm_dir: Path, tmp_path: Path, how: signal.Signals, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.json"
    assert main(["trace", "reverse", "hello", "--out", str(victim)]) == 0
    before = victim.read_bytes()
    command = [sys.executable, "-m", "attnlens.app.cli.main", "trace", str(long_lm_dir), LONG_TEXT,
               "--format", "csv", "--out", str(victim)]  # fmt: skip
    proc = subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        parts = partial(tmp_path, victim.name)
        if parts and parts[0].stat().st_size > 2**20:  # a megabyte of the new file is written
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the command ended before it could be interrupted"
    proc.send_signal(how)
    proc.wait(60)
    assert victim.read_bytes() == before
    assert Trace.from_json(victim.read_text()).src_tokens[:5] == ("h", "e", "l", "l", "o")
    if how == signal.SIGTERM:  # a kill that can be seen is cleaned up after
        assert proc.returncode == 130 and not partial(tmp_path, victim.name)
        assert (
            proc.stderr is not None
            and proc.stderr.read().decode().strip() == "attnlens: interrupted"
        )
    capsys.readouterr()
