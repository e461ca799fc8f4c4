"""Built slides are shared and built once, also when many pages and a prefetch ask at once."""

from __future__ import annotations

import threading
import time

from attnlens.app.teaching.prefetch import SlideCache
from attnlens.app.teaching.slides import Built


def test_a_slide_is_built_once_for_everyone_who_asks_at_once() -> None:
    cache, calls = SlideCache(), []

    def make() -> Built:
        calls.append(1)
        time.sleep(0.2)  # a slow model run: the others wait for it rather than repeat it
        return Built("heatmap")

    got: list[Built] = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("k", make))) for _ in range(8)]
    cache.prefetch("k", make)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 8 and all(b is got[0] for b in got)


def test_the_cache_keeps_only_the_latest_slides_and_a_failed_prefetch_is_quiet() -> None:
    cache = SlideCache(size=2)
    for key in "abc":
        cache.get(key, lambda k=key: Built(k))
    rebuilt = []
    cache.get("a", lambda: rebuilt.append(1) or Built("a"))  # "a" was dropped for "c"
    assert rebuilt == [1]

    def broken() -> Built:
        raise ValueError("no model")

    cache.prefetch("x", broken)
    time.sleep(0.2)
    assert cache.get("x", lambda: Built("x")).name == "x"  # tried again when shown
