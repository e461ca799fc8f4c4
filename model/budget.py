"""How much memory a request may take, checked before anything is allocated.

Two limits, read from the environment on every call so a deployment (or a test) can set them:
  ATTNLENS_MAX_RECORD_MB  one record, and one exported file of it (default 512; a long input's
                          record of scores, which grows with T only: a quarter of the memory
                          available when it is made, at least 512)
  ATTNLENS_MAX_MODEL_MB   one model's weights and tables (default: half the machine's memory)
A value that is not a positive, finite number of megabytes is refused with one line.

Why a quarter of what is available for a record of scores: the trace that makes it also holds
the forward pass's activations, which grow with T as the record does (at Llama-3.2-1B's widths
and a vocabulary of 4,096, 8,192 tokens peaked at the forward's peak + 1.2 × a record of 1.3 GB:
docs/speed.md), and every record made takes from what the next one may have, so records made
one after another (a server's sessions) never ask for more than the machine has.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

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


SCORES_SHARE = 4  # a record of scores may take 1 / this of the memory available


@dataclass(frozen=True)
class Limit:
    """A budget in bytes and where it comes from, as a refusal names it."""

    bytes: int
    source: str


def scores_limit(env: Mapping[str, str] | None = None) -> Limit:
    """The budget of a record of scores: ATTNLENS_MAX_RECORD_MB where it is set; otherwise a
    quarter of the memory available now (at least the record default, 512 MB)."""
    env = os.environ if env is None else env
    if env.get(RECORD_VAR, "").strip():
        return Limit(budget_bytes(env), RECORD_VAR)
    free = available_bytes()
    floor = int(DEFAULT_MB * 2**20)
    if free is None or free // SCORES_SHARE <= floor:
        return Limit(floor, f"{RECORD_VAR}'s default")
    return Limit(
        free // SCORES_SHARE,
        f"a quarter of the {_size(free)} this machine has available; {RECORD_VAR} sets another",
    )


def available_bytes(root: Path = Path("/")) -> int | None:
    """The memory this process may still take: Linux's MemAvailable, less where a cgroup (a
    container) allows less; None where neither can be read."""
    found = []
    try:
        for line in (root / "proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    group = root / "sys/fs/cgroup"
    try:
        ceiling = (group / "memory.max").read_text().strip()
        if ceiling.isdigit():
            found.append(int(ceiling) - int((group / "memory.current").read_text().strip()))
    except (OSError, ValueError):
        pass
    return max(0, min(found)) if found else None


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
    """Per step and beam: the new position's cross row (S) and self-attention row (≤ steps),
    and the norms of what each of their keys gives each head (as many numbers again)."""
    return 2 * n_layers * n_heads * beams * steps * (S + steps) * BYTES_PER_WEIGHT


def check_budget(
    needed: int,
    what: str,
    hint: str = "use shorter input",
    env: Mapping[str, str] | None = None,
    limit: Limit | None = None,
) -> None:
    """Refuse, naming the sizes and where the limit comes from, when a record would exceed
    the budget (ATTNLENS_MAX_RECORD_MB unless another limit is given)."""
    limit = limit or Limit(budget_bytes(env), RECORD_VAR)
    if needed > limit.bytes:
        raise RecordTooLargeError(
            f"the {what} record would take {needed / 2**20:.3g} MB, above the limit of "
            f"{limit.bytes / 2**20:.3g} MB ({limit.source}); {hint}"
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
