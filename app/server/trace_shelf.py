"""Traces that took long to make, kept on disk beside the experiment results, so that a long input
reopened from its link in a new browser session, or after the server restarted, is read back
instead of traced again (Llama-3.2-1B's shape at 4,000 tokens: 17 s of one core to trace, its
218 MB record, kept undeflated, mapped back in 0.01 s: Trace.read_npz).

The memory cache (trace_cache.py) keeps a long trace only while a session holds it: a closed tab
gives its memory back, so the next session to open the same link found nothing. Here each trace
that took at least SHELVE_FROM_S is written as its NPZ record (lossless: Trace.from_npz) once it
is made, in a thread of its own, under a name that hashes the model's fingerprint (its weights)
and the input; at most ATTNLENS_TRACE_DISK_MB are kept, the least recently read going first.
ATTNLENS_CACHE_DIR=off keeps nothing. A file that cannot be written or read is skipped, never
fatal: the trace is made again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from attnlens.analysis.experiments.cache import cache_dir
from attnlens.record.trace import Trace

FOLDER = "traces"
SHELVE_FROM_S = 1.0  # a trace made faster than this is made again rather than kept on disk
DISK_MB = 2048  # ATTNLENS_TRACE_DISK_MB's default: about a dozen records of 4,000 tokens
# bump when what a trace holds for the same input changes: older files are not read. 2: the
# norms (issue 47); a record shelved before them was read back without, and the page greyed
# the norm measure, "recorded before attnlens kept them", on an input it had just traced
VERSION = 2


def shelf_key(fingerprint: str, *inputs: object) -> str:
    """A file name for one model's weights (Lens.fingerprint) and one input."""
    named = json.dumps([VERSION, fingerprint, *inputs], ensure_ascii=False)
    return hashlib.sha256(named.encode()).hexdigest()


class TraceShelf:
    """Traces on disk by key (shelf_key), at most budget_bytes of them."""

    def __init__(
        self, folder: Path | None, budget_bytes: int, from_seconds: float = SHELVE_FROM_S
    ) -> None:
        self.folder, self.budget, self.from_seconds = folder, budget_bytes, from_seconds
        self._writing: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TraceShelf:
        """The shelf ATTNLENS_CACHE_DIR and ATTNLENS_TRACE_DISK_MB (0: none) describe."""
        env = os.environ if env is None else env
        folder = cache_dir(env)
        raw = env.get("ATTNLENS_TRACE_DISK_MB", "").strip()
        mb = int(raw) if raw.isdigit() else DISK_MB
        return cls(None if folder is None or mb == 0 else folder / FOLDER, mb * 2**20)

    def _path(self, key: str) -> Path | None:
        return None if self.folder is None else self.folder / f"{key}.npz"

    def get(self, key: str) -> Trace | None:
        """The trace kept under key, or None (none kept, or unreadable: made again)."""
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            trace = Trace.read_npz(path)  # its queries and keys mapped, not read
        except (OSError, ValueError, KeyError, TypeError):
            with contextlib.suppress(OSError):
                path.unlink()  # a broken file is written again next time
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # read now: the last to go
        return trace

    def put(self, key: str, trace: Trace, seconds: float, wait: bool = False) -> None:
        """Keep trace, which took `seconds` to make, if that was long enough; written in a
        thread of its own (the page that waited for it is drawn meanwhile), at once with
        `wait`."""
        path = self._path(key)
        if path is None or seconds < self.from_seconds or path.is_file():
            return
        with self._lock:
            if key in self._writing:
                return
            self._writing.add(key)
        if wait:
            self._write(key, path, trace)
        else:
            threading.Thread(target=self._write, args=(key, path, trace), daemon=True).start()

    def _write(self, key: str, path: Path, trace: Trace) -> None:
        part = path.with_name(f".{path.stem}.{os.getpid()}.{threading.get_ident()}.part")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with part.open("wb") as handle:
                trace.write_npz(handle, compressed=False)  # read back mapped, not inflated
            part.replace(path)  # whole or not at all, for a reader in another process
            self._prune()
        except OSError:
            pass  # a full disk or a read-only cache loses the copy, not the trace
        finally:
            with contextlib.suppress(OSError):
                part.unlink(missing_ok=True)
            with self._lock:
                self._writing.discard(key)

    def _prune(self) -> None:
        """Drop the least recently read files beyond the budget, and parts a stopped server
        left (older than an hour)."""
        if self.folder is None:
            return
        files, now = [], time.time()
        for entry in self.folder.iterdir():
            with contextlib.suppress(OSError):
                stat = entry.stat()
                if entry.suffix == ".part" and now - stat.st_mtime > 3600:
                    entry.unlink()
                elif entry.suffix == ".npz":
                    files.append((stat.st_mtime, stat.st_size, entry))
        total = sum(size for _, size, _ in files)
        for _, size, entry in sorted(files):
            if total <= self.budget:
                break
            with contextlib.suppress(OSError):
                entry.unlink()
                total -= size
