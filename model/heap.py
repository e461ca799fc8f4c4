"""A long input's record kept out of the heap the forward pass frees, and that freed memory
handed back (docs/speed.md, "Peak memory").

A trace copies each layer's queries and keys while the forward pass runs, between the pass's
own buffers. Copies made on glibc's heap end up between blocks the pass frees, and glibc can
neither give those back nor hand them out whole again: three runs of one 8,192-token trace
peaked 1,635-1,819 MB where the live data was 532 MB. So each copy larger than MAPPED_FROM
gets pages of its own (an anonymous mapping, given back when the array goes), and once the pass
is over glibc is asked to give back whole free pages (malloc_trim).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import mmap
from typing import Any

import numpy as np

MAPPED_FROM = 1 << 16  # bytes: a copy this large gets pages of its own
SLACK = 64 << 20  # bytes freed but kept by glibc past which a layer of the trace gives them back


def mapped_empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialised array; from MAPPED_FROM bytes on, in an anonymous mapping of its own
    (freed to the system with the array)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    if size < MAPPED_FROM:
        return np.empty(shape, dtype)
    pages = mmap.mmap(-1, size)
    return np.frombuffer(pages, dtype=dtype).reshape(shape)


def mapped_copy(a: np.ndarray) -> np.ndarray:
    """A copy of a (contiguous), mapped on its own where large (mapped_empty)."""
    out = mapped_empty(a.shape, a.dtype)
    np.copyto(out, a)
    return out


def give_back_over(slack: int = SLACK) -> None:
    """give_back() once glibc holds more than `slack` bytes freed (mallinfo2's fordblks; a
    few microseconds to ask). A trace's forward pass calls it once a layer: its buffers,
    freed between the layers' copies, had held 100 MB more at 2,048 tokens than the sdpa
    pass did (glibc's heap took another shape), and giving back at each layer costs more
    in pages faulted again than once a layer past this much."""
    info = _mallinfo2()
    if info is not None and info().fordblks > slack:
        give_back()


def give_back() -> None:
    """Return freed heap memory to the system (glibc's malloc_trim, which gives back every
    whole free page of every arena; elsewhere a no-op)."""
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


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks",
                "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]  # fmt: skip


@functools.cache
def _mallinfo2() -> Any:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        call = ctypes.CDLL(name).mallinfo2
    except (OSError, AttributeError):
        return None
    call.restype = _MallInfo2
    return call
