"""Which models a deployment may load: everything locally, a fixed list on a public server.

Server mode is set by the environment, read once per call so a test can change it:
  ATTNLENS_SERVER_MODE=1     only bundled names and the allow-list load
  ATTNLENS_ALLOWED_MODELS    comma-separated folders and hub ids allowed besides bundled names
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from attnlens.record.errors import InputError, clipped


class ModelNotAllowedError(InputError):
    """The deployment does not allow this model."""


@dataclass(frozen=True)
class AccessPolicy:
    """Restricts loading to bundled names plus an allow-list when server_mode is on."""

    server_mode: bool = False
    allowed: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AccessPolicy:
        env = os.environ if env is None else env
        on = env.get("ATTNLENS_SERVER_MODE", "").strip().lower() in ("1", "true", "yes", "on")
        allowed = tuple(
            a.strip() for a in env.get("ATTNLENS_ALLOWED_MODELS", "").split(",") if a.strip()
        )
        return cls(on, allowed)

    def check(self, name_or_path: str, bundled: set[str]) -> None:
        """Raise ModelNotAllowedError unless this model may be loaded. The message never lists
        the allow-list: its folders are the server's own paths, not a visitor's to read."""
        if not self.server_mode or name_or_path in bundled:
            return
        if (control := control_character(name_or_path)) is not None:
            raise ModelNotAllowedError(
                f"model {clipped(name_or_path)!r} is not allowed on this server: a model name "
                f"holds no control characters, and it has {control!r}"
            )
        if any(_same(name_or_path, a) for a in self.allowed):
            return
        raise ModelNotAllowedError(
            f"model {clipped(name_or_path)!r} is not allowed on this server: it loads its bundled "
            f"models ({', '.join(sorted(bundled)) or 'none'}), and an operator allows a folder "
            "or hub id by adding it to ATTNLENS_ALLOWED_MODELS"
        )


def control_character(name: str) -> str | None:
    """The first control character in name (a NUL, a newline, ...), or None: no file or hub
    name holds one, and the file system refuses a NUL with a bare ValueError."""
    return next((c for c in name if unicodedata.category(c) == "Cc"), None)


def _same(requested: str, allowed: str) -> bool:
    """Equal hub ids, or folders that resolve to the same place (no '..' or link escapes)."""
    if requested == allowed:
        return True
    try:
        return Path(requested).expanduser().resolve() == Path(allowed).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return False
