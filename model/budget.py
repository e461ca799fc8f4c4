"""How much memory a request may take, checked before anything is allocated.

Two limits, read from the environment on every call so a deployment (or a test) can set them:
  ATTNLENS_MAX_RECORD_MB  one record, and one exported file of it (default 512)
  ATTNLENS_MAX_MODEL_MB   one model's weights and tables (default: half the machine's memory)
A value that is not a positive, finite number of megabytes is refused with one line.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from attnlens.record.errors import InputError

BYTES_PER_WEIGHT = 4  # float32
DEFAULT_MB = 512.0
RECORD_VAR, MODEL_VAR = "ATTNLENS_MAX_RECORD_MB", "ATTNLENS_MAX_MODEL_MB"
LARGEST_MB = 2.0**40  # a megabyte count beyond any machine: a typo, not a setting
MAX_LAYERS = 1024  # deeper than any published model; building more modules takes minutes


class RecordTooLargeError(InputError):
    """The record would take more memory than the configured budget."""


class SettingError(InputError):
    """A limit in the environment is not a usable number."""


def _megabytes(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "")
    if not raw.strip():
        return default
    try:
        mb = float(raw)
    except ValueError:
        mb = math.nan
    if not (0 < mb <= LARGEST_MB):  # also false for nan and inf
        raise SettingError(
            f"{name} must be a number of megabytes above 0 and at most {LARGEST_MB:.0f} "
            f"(e.g. {default:.0f}), got {raw!r}"
        )
    return mb


def budget_bytes(env: Mapping[str, str] | None = None) -> int:
    """The record budget in bytes (ATTNLENS_MAX_RECORD_MB)."""
    env = os.environ if env is None else env
    return int(_megabytes(env, RECORD_VAR, DEFAULT_MB) * 2**20)


def default_model_mb() -> float:
    """Half of the machine's physical memory, in MB (4096 where the size cannot be read)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return 4096.0
    return max(1.0, total / 2 / 2**20)


def model_budget_bytes(env: Mapping[str, str] | None = None) -> int:
    """The largest model in bytes (ATTNLENS_MAX_MODEL_MB)."""
    env = os.environ if env is None else env
    return int(_megabytes(env, MODEL_VAR, default_model_mb()) * 2**20)


def check_settings(env: Mapping[str, str] | None = None) -> None:
    """Refuse a limit in the environment that is not a usable number (at start-up)."""
    budget_bytes(env)
    model_budget_bytes(env)


def trace_bytes(n_layers: int, n_heads: int, S: int, T: int) -> int:
    """Encoder self (S²), decoder self (T²) and cross (T·S) for every layer and head."""
    return n_layers * n_heads * (S * S + T * T + T * S) * BYTES_PER_WEIGHT


def decode_bytes(n_layers: int, n_heads: int, S: int, steps: int, beams: int) -> int:
    """Per step and beam: the new position's cross row (S) and self-attention row (≤ steps)."""
    return n_layers * n_heads * beams * steps * (S + steps) * BYTES_PER_WEIGHT


def check_budget(
    needed: int, what: str, hint: str = "use shorter input", env: Mapping[str, str] | None = None
) -> None:
    """Refuse, naming the sizes, when a record would exceed the budget."""
    limit = budget_bytes(env)
    if needed > limit:
        raise RecordTooLargeError(
            f"the {what} record would take {needed / 2**20:.3g} MB, above the limit of "
            f"{limit / 2**20:.3g} MB ({RECORD_VAR}); {hint}"
        )


def check_model_size(n_bytes: int, name: str, env: Mapping[str, str] | None = None) -> None:
    """Refuse, before anything is built, a model larger than the model budget."""
    limit = model_budget_bytes(env)
    if n_bytes > limit:
        raise InputError(
            f"{name} would take {_size(n_bytes)} of memory, above the limit of {_size(limit)} "
            f"({MODEL_VAR})"
        )


def _size(n_bytes: int | float) -> str:
    mb = n_bytes / 2**20
    if mb < 1024:
        return f"{mb:.3g} MB"
    return f"{mb / 1024:,.0f} GB" if mb >= 100 * 1024 else f"{mb / 1024:.3g} GB"


def check_layers(n_layers: int, name: str) -> None:
    """Refuse a stack deeper than MAX_LAYERS (its modules alone take minutes to build)."""
    if n_layers > MAX_LAYERS:
        raise InputError(
            f"{name} has {n_layers} layers; attnlens loads models of at most {MAX_LAYERS}"
        )
