"""Freed memory handed back to the system (app/server/memory.py), measured in a process of its
own: blocks below the mmap threshold, freed between blocks that stay, are what glibc keeps.
And the objects alive once a model is loaded, frozen out of Python's full collections."""

from __future__ import annotations

import ctypes.util
import gc
import json
import subprocess
import sys
import textwrap
import weakref

import pytest

from attnlens.app.server.memory import freeze_long_lived

PROBE = textwrap.dedent(
    """
    import json, threading
    from attnlens.app.server.memory import give_back_memory

    def rss_mb():
        with open("/proc/self/status") as f:
            line = next(ln for ln in f if ln.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024

    kept = []
    def allocate():  # in a thread of its own, as a server's script runs: an arena of its own
        blocks = [bytearray(b"x" * 2**20) for _ in range(400)]  # 400 MB, touched
        kept.extend(blocks[::20])  # every 20th stays: the freed ones lie between them
    worker = threading.Thread(target=allocate)
    worker.start()
    worker.join()
    freed = rss_mb()
    give_back_memory()
    print(json.dumps({"freed": freed, "trimmed": rss_mb(), "kept": len(kept)}))
    """
)


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or ctypes.util.find_library("c") is None,
    reason="malloc_trim is glibc's",
)
def test_memory_freed_between_live_blocks_goes_back_to_the_system() -> None:
    env = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "PATH": "/usr/bin:/bin"}  # as serve sets
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["kept"] == 20
    # 380 of the 400 MB were freed; the allocator held them until asked to give them back
    assert found["freed"] - found["trimmed"] > 300, found


class Node:
    me: object


def test_garbage_is_collected_and_what_lives_is_frozen_until_the_next_freeze() -> None:
    garbage = Node()
    garbage.me = garbage  # a cycle nothing refers to: only a collection frees it
    gone = weakref.ref(garbage)
    del garbage
    alive = Node()
    alive.me = alive
    try:
        freeze_long_lived()
        assert gone() is None  # collected before the freeze, not frozen with the rest
        assert gc.get_freeze_count() > 0
        assert not any(o is alive for o in gc.get_objects())  # out of every generation
        later = weakref.ref(alive)
        del alive
        gc.collect()
        assert later() is not None  # frozen: a full collection does not reach it
        freeze_long_lived()
        assert later() is None  # thawed first, then collected
    finally:
        gc.unfreeze()


def test_a_model_loaded_for_the_server_is_frozen_with_what_it_holds() -> None:
    """shared_lens freezes once the model is loaded: the model's own objects are out of every
    generation a later full collection walks."""
    from attnlens.app.web import resources

    gc.unfreeze()
    resources.shared_lens.clear()  # loaded here, whatever this process loaded before
    try:
        lens = resources.shared_lens("reverse")
        assert gc.get_freeze_count() > 0
        assert not any(o is lens for o in gc.get_objects())
    finally:
        gc.unfreeze()
        resources.shared_lens.clear()
