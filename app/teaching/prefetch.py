"""Slides built once per process and shared by every session, and the next slide built before
the teacher asks for it, so the class follows a press of → at the speed of a cache."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from attnlens.app.teaching.slides import Built

MAX_SLIDES = 128  # built slides kept per process (a deck of 14 on a few models and inputs)


class SlideCache:
    """A bounded map from a slide's key to its built slide; building happens once per key, on
    whichever thread asks first (a page, or a prefetch in the background)."""

    def __init__(self, size: int = MAX_SLIDES) -> None:
        self.size = size
        self._built: OrderedDict[Hashable, Built] = OrderedDict()
        self._building: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], Built]) -> Built:
        """The slide for key, built by make if no one has (waiting if someone is building it)."""
        while True:
            with self._lock:
                if key in self._built:
                    self._built.move_to_end(key)
                    return self._built[key]
                busy = self._building.get(key)
                if busy is None:
                    busy = self._building[key] = threading.Event()
                    break
            busy.wait()
        try:
            built = make()
            with self._lock:
                self._built[key] = built
                while len(self._built) > self.size:
                    self._built.popitem(last=False)
            return built
        finally:
            with self._lock:
                del self._building[key]
            busy.set()

    def prefetch(self, key: Hashable, make: Callable[[], Built]) -> None:
        """Build the slide in a background thread unless it is built or being built."""
        with self._lock:
            if key in self._built or key in self._building:
                return
        threading.Thread(target=self._quietly, args=(key, make), daemon=True).start()

    def _quietly(self, key: Hashable, make: Callable[[], Built]) -> None:
        try:
            self.get(key, make)
        except Exception:  # a prefetch that fails is built (and reported) when it is shown
            return

    def clear(self) -> None:
        with self._lock:
            self._built.clear()
