"""Fixtures shared by every test folder. Helpers that tests import live in tests/helpers/."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
import torch

from attnlens.model.lenses.causal import CausalLens
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.registry import load
from helpers.handbuilt import previous_token_lm, silent_head_task_model
from helpers.long_gpt2 import long_gpt2
from helpers.redis_server import MISSING, REDIS_SERVER, redis_server
from helpers.server import LOG_FOLDER, SERVER_LOGS
from helpers.tiny import save_long_lm, save_tiny_lm, save_tiny_model

# One intra-op thread: on tiny models torch's pool only thrashes (2 cores: the six slowest
# tests took 2 min 41 s with the default threads and 22 s with one).
torch.set_num_threads(1)
# and the app's traces too (app/server/trace_threads.py would give a trace every core): the
# tests compare its records with their own, to the byte, and the sums' order follows the threads
os.environ.setdefault("ATTNLENS_TRACE_THREADS", "1")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random, untrained 2-layer model saved as safetensors + config.json."""
    return save_tiny_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="session")
def tiny_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer decoder-only model saved like the bundled lm."""
    return save_tiny_lm(tmp_path_factory.mktemp("lm"))


@pytest.fixture(scope="session")
def long_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random decoder-only model of ours reading 600 characters (helpers/tiny.py): a large
    record without transformers."""
    return save_long_lm(tmp_path_factory.mktemp("long-lm"))


@pytest.fixture(scope="session")
def long_gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GPT-2-shaped model with random weights reading 600 positions and one token a word
    (tests/helpers/long_gpt2.py), saved once for every test of the process."""
    return long_gpt2(tmp_path_factory.mktemp("long_gpt2"))


@pytest.fixture(scope="session")
def lm(tiny_lm_dir: Path) -> CausalLens:
    """The tiny decoder-only model, loaded."""
    lens = load(str(tiny_lm_dir), device="cpu")
    assert isinstance(lens, CausalLens)
    return lens


@pytest.fixture(scope="session", autouse=True)
def class_store_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Live classes of the tests (and of the servers they start) go to a temporary SQLite
    file, never to the user's own store."""
    name = "ATTNLENS_CLASS_STORE"
    before = os.environ.get(name)
    os.environ[name] = f"sqlite:///{tmp_path_factory.mktemp('classes') / 'classes.sqlite3'}"
    yield
    if before is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = before


@pytest.fixture(scope="session", autouse=True)
def traces_in_the_server() -> Iterator[None]:
    """The servers and in-process apps of the tests make their traces themselves unless a test
    asks for workers (tests/app/server/test_trace_workers.py): a worker beside each of the suite's
    servers would import torch once more per server, about 2 s of CPU each on two cores."""
    name = "ATTNLENS_TRACE_WORKERS"
    before = os.environ.get(name)
    os.environ[name] = "0"
    yield
    if before is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = before


@pytest.fixture(scope="session", autouse=True)
def server_logs_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The servers the tests start (tests/helpers/server.py) write their output to files in
    this run's temporary folder; a failing test shows their last lines (see below)."""
    before = os.environ.get(LOG_FOLDER)
    os.environ[LOG_FOLDER] = str(tmp_path_factory.mktemp("server-logs"))
    yield
    if before is None:
        os.environ.pop(LOG_FOLDER, None)
    else:
        os.environ[LOG_FOLDER] = before


SERVERS_BEFORE = pytest.StashKey[int]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    item.stash[SERVERS_BEFORE] = len(SERVER_LOGS)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failing test shows the last lines of what its servers wrote: those it (or a fixture
    of its) started, and those of its module still running."""
    report: pytest.TestReport = yield
    if report.failed:
        first = item.stash.get(SERVERS_BEFORE, len(SERVER_LOGS))
        for i, log in enumerate(SERVER_LOGS):
            if i >= first or log.proc.poll() is None:
                report.sections.append((f"server on port {log.port}", log.tail()))
    return report


@pytest.fixture(scope="session")
def hand_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A decoder-only model with an exact previous-token head and two silent heads."""
    return previous_token_lm(tmp_path_factory.mktemp("hand-lm"))


@pytest.fixture(scope="session")
def hand_lm(hand_lm_dir: Path) -> Lens:
    return load(str(hand_lm_dir), device="cpu")


@pytest.fixture(scope="session")
def hand_reverse_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained model of the reverse task with two silent heads."""
    return silent_head_task_model(tmp_path_factory.mktemp("hand-rev"))


@pytest.fixture(scope="session")
def hand_reverse(hand_reverse_dir: Path) -> Lens:
    return load(str(hand_reverse_dir), device="cpu")


@pytest.fixture(autouse=True)
def _experiment_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test keeps its experiment results to itself (never the user's ~/.cache)."""
    monkeypatch.setenv("ATTNLENS_CACHE_DIR", str(tmp_path / "experiment-cache"))


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server started for this test session; skipped with the reason if missing."""
    if REDIS_SERVER is None:
        pytest.skip(MISSING)
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files with slow or browser tests first. `make test` hands whole files to its workers in
    this order (--no-loadscope-reorder), so that no slow file is handed out last to keep one
    worker busy while the others idle. The order within each group is kept. Pytest took 383 s,
    against 390 and 393 s with xdist's order (most tests first: one-test files of 40-70 s last)."""
    slow = {
        item.path
        for item in items
        if item.get_closest_marker("slow") or item.get_closest_marker("browser")
    }
    items.sort(key=lambda item: item.path not in slow)
