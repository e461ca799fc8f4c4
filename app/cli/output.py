"""Where the command line writes: standard output, or a file replaced whole.

A file is written beside its destination and renamed over it, so an interrupted write (a full
disk, Ctrl-C, a kill) leaves the earlier file as it was, never half a record. Records are
written piece by piece (attnlens.record.export), so writing takes memory for one piece only.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def write_text(text: str, out: Path | None) -> None:
    """text to standard output, or to out (UTF-8, replaced whole)."""
    with text_out(out) as handle:
        handle.write(text)


def write_bytes(blob: bytes, out: Path | None) -> None:
    """blob to standard output, or to out (replaced whole)."""
    with binary_out(out) as handle:
        handle.write(blob)


@contextlib.contextmanager
def text_out(out: Path | None) -> Iterator[IO[str]]:
    """A text handle on standard output, or on out (UTF-8, replaced whole once written)."""
    if out is None:
        yield sys.stdout
        sys.stdout.flush()
        return
    with _replacing(out, "w") as handle:
        yield handle


@contextlib.contextmanager
def binary_out(out: Path | None) -> Iterator[IO[bytes]]:
    """A binary handle on standard output, or on out (replaced whole once written)."""
    if out is None:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    with _replacing(out, "wb") as handle:
        yield handle


@contextlib.contextmanager
def _replacing(out: Path, mode: str) -> Iterator[IO[Any]]:
    """A temporary file beside out that replaces out once everything was written, and is
    removed if writing fails or is interrupted."""
    folder = out.resolve().parent
    fd, temporary = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=folder)
    try:
        os.chmod(temporary, _mode_for(out))  # mkstemp's 0600 is for secrets, not records
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            yield handle
        os.replace(temporary, out)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _mode_for(out: Path) -> int:
    """The mode out has, or what a newly created file gets under the current umask."""
    try:
        return out.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
