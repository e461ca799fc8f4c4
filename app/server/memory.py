"""Freed memory handed back to the operating system.

glibc keeps what a process freed for its own later use, and returns it to the system only from
the top of each arena (and only what is above the trim threshold) or when asked with
malloc_trim. A long input's forward pass frees hundreds of MB of blocks below the mmap
threshold (`attnlens serve` fixes it at 32 MiB, app/cli/serve.py): its activations and the
temporaries of the summaries, between which the record's own arrays stay. Without a trim the
server kept all of it for as long as it ran: on Llama-3.2-1B's shape (hidden 512) at 8,192
tokens a trace added 820 MB to the process for a record of 368 MB, 380 MB once trimmed (at
2,048: 280 MB for 116 MB, 127 MB once trimmed). A trim that finds little to give back costs
well under a millisecond.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any


def give_back_memory() -> None:
    """Return freed heap memory to the operating system (glibc's malloc_trim, which gives back
    every whole free page of every arena; elsewhere a no-op)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
