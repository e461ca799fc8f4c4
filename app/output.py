"""Where the command line writes: standard output, or a file replaced whole.

A file is written beside its destination and renamed over it, so an interrupted write (a full
disk, Ctrl-C) leaves the earlier file as it was, never half a record.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path


def write_text(text: str, out: Path | None) -> None:
    """text to standard output, or to out (UTF-8, replaced whole)."""
    if out is None:
        sys.stdout.write(text)
    else:
        write_bytes(text.encode("utf-8"), out)


def _umask() -> int:
    """The process's umask (read by setting it, then putting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes(blob: bytes, out: Path | None) -> None:
    """blob to standard output, or to out (replaced whole)."""
    if out is None:
        sys.stdout.buffer.write(blob)
        return
    folder = out.resolve().parent
    fd, temporary = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # what open() would give: mkstemp makes it private
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.replace(temporary, out)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
