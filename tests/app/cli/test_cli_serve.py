"""`attnlens serve --class-store URL --decks DIR`: checked before the app starts; the
allocator settings it gives the server let threads give back what they freed."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from attnlens.app.cli.main import main
from attnlens.app.cli.serve import SERVER_ENVIRONMENT, prepare_teaching, server_environment


def test_a_store_that_cannot_be_used_stops_serve_with_its_reason(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", "restored after the test")
    assert main(["serve", "--class-store", "postgres://db/x"]) == 2
    assert "sqlite:///PATH" in capsys.readouterr().err
    assert main(["serve", "--class-store", "redis://127.0.0.1:9/0"]) == 2  # nothing listens
    err = capsys.readouterr().err
    assert err.startswith("attnlens: error: class store redis://127.0.0.1:9/0") and err[-1] == "\n"
    assert main(["serve", "--decks", "/no/such/folder"]) == 2
    assert "--decks /no/such/folder: no such folder" in capsys.readouterr().err


def test_serve_names_each_bad_deck_and_sets_the_store_and_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "good.deck").write_text("=== One\nfigure: stacks\n\nWords.\n")
    (tmp_path / "bad.deck").write_text("=== One\nfigure: stacks\nlayer: x\n")
    store = f"sqlite:///{tmp_path / 'c.sqlite3'}"
    monkeypatch.delenv("ATTNLENS_DECKS", raising=False)
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", "unused")
    args = argparse.Namespace(class_store=store, decks=[tmp_path])
    prepare_teaching(args)
    err = capsys.readouterr().err
    assert err.count("attnlens: warning:") == 1 and "bad.deck: slide 1" in err
    assert "field 'layer'" in err
    assert os.environ["ATTNLENS_CLASS_STORE"] == store and (tmp_path / "c.sqlite3").exists()
    assert os.environ["ATTNLENS_DECKS"] == str(tmp_path.resolve())


# prepare_teaching in a process of its own, so that a read that hangs is killed, not waited on
PREPARE = """
import argparse, sys
from pathlib import Path
from attnlens.app.cli.serve import prepare_teaching
prepare_teaching(argparse.Namespace(class_store=sys.argv[1], decks=[Path(sys.argv[2])]))
print("ready")
"""


def test_serve_starts_past_a_fifo_or_a_linked_secret_and_says_why_without_it(
    tmp_path: Path,
) -> None:
    decks = tmp_path / "decks"
    decks.mkdir()
    (decks / "good.deck").write_text("=== One\nfigure: stacks\n\nWords.\n")
    os.mkfifo(decks / "x.deck")
    (tmp_path / "shadow").write_text("root:$6$secret:19000:0:99999:7:::\n")
    (decks / "shadow.deck").symlink_to(tmp_path / "shadow")
    store = f"sqlite:///{tmp_path / 'c.sqlite3'}"
    env = {k: v for k, v in os.environ.items() if k != "ATTNLENS_DECKS"}
    done = subprocess.run([sys.executable, "-c", PREPARE, store, str(decks)], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0 and done.stdout == "ready\n", done.stderr
    warnings = done.stderr.strip().splitlines()
    assert len(warnings) == 2 and all(w.startswith("attnlens: warning: ") for w in warnings)
    assert f"{decks / 'x.deck'}: a FIFO (named pipe), not a regular file" in done.stderr
    assert f"{decks / 'shadow.deck'}: a link to a file outside the decks folder" in done.stderr
    assert "$6$secret" not in done.stderr


def test_serve_uses_a_real_redis_store(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", "unused")
    prepare_teaching(argparse.Namespace(class_store=redis_url, decks=None))
    assert os.environ["ATTNLENS_CLASS_STORE"] == redis_url


def test_serve_host_sets_the_address_streamlit_listens_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--host 0.0.0.0 (a class on the room's network) or 127.0.0.1 (this machine only) becomes
    Streamlit's server.address; without it Streamlit listens on every network; a bad one is
    refused before anything starts."""
    started: list[list[str]] = []
    monkeypatch.setattr(os, "execve", lambda _exe, command, _env: started.append(command))
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", f"sqlite:///{tmp_path / 'c.sqlite3'}")
    for host in ("0.0.0.0", "127.0.0.1", "::", "class.example.edu"):
        assert main(["serve", "--host", host, "--port", "8600"]) == 0
        at = started[-1].index("--server.address")
        assert started[-1][at + 1] == host
    assert main(["serve"]) == 0 and "--server.address" not in started[-1]
    for bad in ("a b", "http://x", "-x.edu", "x" * 300):
        assert main(["serve", f"--host={bad}"]) == 2
        assert "--host must be an IP address" in capsys.readouterr().err
    assert len(started) == 5


def test_the_servers_settings_keep_what_the_environment_sets() -> None:
    env = server_environment({"PATH": "/bin", "ARROW_DEFAULT_MEMORY_POOL": "jemalloc"})
    assert env["PATH"] == "/bin" and env["ARROW_DEFAULT_MEMORY_POOL"] == "jemalloc"
    assert env["MALLOC_MMAP_THRESHOLD_"] == str(32 * 2**20)
    assert server_environment({}) == SERVER_ENVIRONMENT


# Three threads, as a server's download and script threads: each frees a 20 MB block, then
# makes and frees 30 MB in 1 MB pieces; the memory the process keeps after malloc_trim, in MB.
CHURN = """
import ctypes, re, threading
from pathlib import Path

def rss():
    return int(re.search(r"VmRSS:\\s+(\\d+)", Path("/proc/self/status").read_text())[1]) >> 10

def work():
    block = b"x" * (20 << 20)
    del block
    pieces = [b"y" * (1 << 20) for _ in range(30)]
    del pieces

before = rss()
threads = [threading.Thread(target=work) for _ in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
ctypes.CDLL("libc.so.6").malloc_trim(0)
print(rss() - before)
"""


def kept_mb(env: Mapping[str, str]) -> int:
    done = subprocess.run([sys.executable, "-c", CHURN], env=dict(env), capture_output=True,
                          text=True, check=True, timeout=60)  # fmt: skip
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, calls glibc")
def test_threads_give_back_what_they_freed_under_the_servers_settings() -> None:
    plain = {k: v for k, v in os.environ.items() if k not in SERVER_ENVIRONMENT}
    without = kept_mb(plain)
    if without < 60:
        pytest.skip(f"this C library gives it back without the settings (kept {without} MB)")
    assert kept_mb(server_environment(plain)) <= 10, f"kept {without} MB without the settings"
