"""Traces that took long, kept on disk (app/server/trace_shelf.py): a long input reopened after
every session let it go, or after a restart, is read back, not traced again (issue 49: the
Llama shape at 4,000 tokens took 33 s again in a new browser session)."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import io
import json
import mmap
import time
from pathlib import Path

import numpy as np
import pytest

import attnlens
from attnlens.app.server.trace_cache import SharedTraces
from attnlens.app.server.trace_shelf import FOLDER, TraceShelf, shelf_key
from attnlens.record.trace import Trace


@pytest.fixture(scope="module")
def lens(tiny_model_dir: Path) -> attnlens.Lens:
    return attnlens.load(str(tiny_model_dir))


def slow(lens: attnlens.Lens, text: str, calls: list[str], seconds: float = 0.05) -> object:
    def compute() -> Trace:
        calls.append(text)
        time.sleep(seconds)
        return lens.trace(text)

    return compute


def test_a_trace_let_go_by_every_session_is_read_back_from_disk(
    lens: attnlens.Lens, tmp_path: Path
) -> None:
    shelf = TraceShelf(tmp_path, 2**30, from_seconds=0.01)
    cache, calls = SharedTraces(0, shelf=shelf), []  # keeps nothing in memory once let go
    name = shelf_key(lens.fingerprint(), "bad", None, None, "auto")
    first = cache.get(lens, ("bad",), slow(lens, "bad", calls), lambda: name)
    wanted = first.attention("cross").copy()
    deadline = time.monotonic() + 30
    while not (tmp_path / f"{name}.npz").is_file() and time.monotonic() < deadline:
        time.sleep(0.05)  # written in a thread of its own
    del first
    gc.collect()
    restarted = SharedTraces(0, shelf=TraceShelf(tmp_path, 2**30, from_seconds=0.01))
    for where in (cache, restarted):  # the same server once the tab closed; a new server
        again = where.get(lens, ("bad",), slow(lens, "bad", calls), lambda: name)
        np.testing.assert_array_equal(again.attention("cross"), wanted)
        assert not again.attention("cross").flags.writeable  # shared: read-only as ever
    assert calls == ["bad"], "traced once"


def test_a_quick_trace_is_not_kept_and_the_budget_drops_the_least_recently_read(
    lens: attnlens.Lens, tmp_path: Path
) -> None:
    shelf = TraceShelf(tmp_path, 2**30, from_seconds=10.0)
    shelf.put("quick", lens.trace("bad"), seconds=0.1, wait=True)
    assert not list(tmp_path.iterdir())
    written = io.BytesIO()
    lens.trace("bad").write_npz(written, compressed=False)  # as the shelf writes it
    one = len(written.getvalue())
    small = TraceShelf(tmp_path, int(2.5 * one), from_seconds=0.0)
    for key, text in (("a", "bad"), ("b", "cab"), ("c", "dab")):
        small.put(key, lens.trace(text), seconds=1.0, wait=True)
        time.sleep(0.02)  # distinct modification times
        if key == "b":
            assert small.get("a") is not None  # read: "a" is now the most recent
    assert sorted(p.stem for p in tmp_path.glob("*.npz")) == ["a", "c"]


def test_a_broken_file_is_made_again_and_off_keeps_nothing(
    lens: attnlens.Lens, tmp_path: Path
) -> None:
    shelf = TraceShelf(tmp_path, 2**30, from_seconds=0.0)
    (tmp_path / "x.npz").write_bytes(b"not a record")
    assert shelf.get("x") is None and not (tmp_path / "x.npz").exists()
    off = TraceShelf.from_env({"ATTNLENS_CACHE_DIR": "off"})
    off.put("y", lens.trace("bad"), seconds=60.0, wait=True)
    assert off.get("y") is None
    none = TraceShelf.from_env({"ATTNLENS_CACHE_DIR": str(tmp_path), "ATTNLENS_TRACE_DISK_MB": "0"})
    assert none.folder is None
    kept = TraceShelf.from_env({"ATTNLENS_CACHE_DIR": str(tmp_path)})
    assert kept.folder == tmp_path / FOLDER


def mapped(array: np.ndarray) -> bool:
    """Whether the array's numbers are a file's pages mapped into memory."""
    base: object = array
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base.obj if isinstance(base, memoryview) else base, mmap.mmap)


def test_a_long_record_is_mapped_from_disk_not_read(lens: attnlens.Lens, tmp_path: Path) -> None:
    """Issue 49: a long link reopened read its 200 MB record whole, then copied each array out
    of it (2.5 s at load 11, most of the 3 s allowed); its queries, keys, norms and overviews
    are mapped from the file, every number the same, and a file cut short is made again."""
    shelf = TraceShelf(tmp_path, 2**30, from_seconds=0.0)
    made = lens.trace("bad cafe", record="scores")
    assert made.scores is not None
    shelf.put("long", made, seconds=5.0, wait=True)
    back = shelf.get("long")
    assert back is not None and back.equals(made)
    assert back.scores is not None and back.norms is not None
    arrays = [a for layers in back.scores.values() for lay in layers for a in (lay.q, lay.k)]
    arrays += [a for norms in back.norms.values() for a in (norms.carried, norms.written)]
    assert len(arrays) > 4
    for array in arrays:
        assert mapped(array), "read into memory, not mapped"
        assert not array.flags.writeable
    whole = (tmp_path / "long.npz").read_bytes()
    (tmp_path / "long.npz").write_bytes(whole[: len(whole) // 2])
    assert shelf.get("long") is None and not (tmp_path / "long.npz").exists()


def test_the_name_follows_the_weights_and_every_part_of_the_input() -> None:
    names = {
        shelf_key("m@1", "text", None, None, "auto"),
        shelf_key("m@2", "text", None, None, "auto"),
        shelf_key("m@1", "text ", None, None, "auto"),
        shelf_key("m@1", "text", "target", None, "auto"),
        shelf_key("m@1", "text", None, None, "scores"),
    }
    assert len(names) == 5


def test_a_record_shelved_before_the_norms_is_traced_again(
    lens: attnlens.Lens, tmp_path: Path
) -> None:
    """A file an older attnlens shelved (key version 1, a record without norms) is not read:
    it was, and Explore greyed the norm measure on the bundled reverse's default text."""
    made = lens.trace("bad")
    assert made.norms is not None
    inputs = (lens.fingerprint(), "bad", None, None, "auto")
    older = hashlib.sha256(json.dumps([1, *inputs], ensure_ascii=False).encode()).hexdigest()
    shelf = TraceShelf(tmp_path, 2**30, from_seconds=0.0)
    shelf.put(older, dataclasses.replace(made, norms=None), 1.0, wait=True)
    assert (tmp_path / f"{older}.npz").is_file()
    again = shelf.get(shelf_key(*inputs))
    assert again is None or again.norms is not None
