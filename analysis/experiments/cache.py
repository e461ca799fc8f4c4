"""Experiment results kept on disk in SQLite, per model (its weights' fingerprint), experiment
and input set, so a second run is read back instead of recomputed, in any process.

The file is $ATTNLENS_CACHE_DIR/experiments.sqlite (default: $XDG_CACHE_HOME/attnlens, else
~/.cache/attnlens); ATTNLENS_CACHE_DIR=off keeps nothing. At most MAX_ENTRIES results are kept,
the oldest dropped first. A cache that cannot be opened or read is skipped, never fatal.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attnlens.record.experiment import ExperimentResult

MAX_ENTRIES = 500
FILE = "experiments.sqlite"
# bump when an experiment's definition changes: older results are not reused (v3: heads are
# named by the records' kinds, `encoder_self:0.1` where v2's pruning curves said `encoder:0.1`;
# v4: a task model's confidence is read on the queries that predict a token, the end token fed
# as an input no longer among them, as docs/experiments.md defines it)
VERSION = 4


def cache_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """Where results are kept; None when caching is switched off."""
    env = os.environ if env is None else env
    given = env.get("ATTNLENS_CACHE_DIR", "").strip()
    if given.lower() == "off":
        return None
    if given:
        return Path(given).expanduser()
    xdg = env.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "attnlens"


def cache_key(experiment: str, fingerprint: str, params: Mapping[str, Any]) -> str:
    """One string naming an experiment on one model's weights and one input set."""
    shown = json.dumps(dict(params), sort_keys=True)
    return f"v{VERSION}|{experiment}|{fingerprint}|{shown}"


class ResultCache:
    """get / put ExperimentResults by key; a fresh connection per call (thread-safe)."""

    def __init__(self, folder: Path | None, limit: int = MAX_ENTRIES) -> None:
        self.path = None if folder is None else folder / FILE
        self.limit = limit

    @classmethod
    def default(cls) -> ResultCache:
        return cls(cache_dir())

    def _connect(self) -> sqlite3.Connection | None:
        if self.path is None:
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=10)
            db.execute(
                "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, saved REAL, json TEXT)"
            )
            return db
        except (OSError, sqlite3.Error):
            return None  # a read-only or broken cache: compute as if it were empty

    def get(self, key: str) -> ExperimentResult | None:
        db = self._connect()
        if db is None:
            return None
        try:
            with db:
                row = db.execute("SELECT json FROM results WHERE key = ?", (key,)).fetchone()
            return None if row is None else ExperimentResult.from_json(row[0])
        except (sqlite3.Error, ValueError, KeyError, TypeError):
            return None  # unreadable entry: recompute (and overwrite it)
        finally:
            db.close()

    def put(self, key: str, result: ExperimentResult) -> None:
        db = self._connect()
        if db is None:
            return
        try:
            with db:
                db.execute(
                    "INSERT OR REPLACE INTO results VALUES (?, ?, ?)",
                    (key, time.time(), result.to_json()),
                )
                db.execute(
                    "DELETE FROM results WHERE key NOT IN "
                    "(SELECT key FROM results ORDER BY saved DESC, rowid DESC LIMIT ?)",
                    (self.limit,),
                )
        except sqlite3.Error:
            pass  # a full disk or a locked file loses the cache entry, not the result
        finally:
            db.close()
