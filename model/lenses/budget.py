"""How much memory a record will take, checked before the model runs.

The limit is ATTNLENS_MAX_RECORD_MB (default 512) so a deployment can lower it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from attnlens.record.errors import InputError

BYTES_PER_WEIGHT = 4  # float32
DEFAULT_MB = 512.0


class RecordTooLargeError(InputError):
    """The record would take more memory than the configured budget."""


def budget_bytes(env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    raw = env.get("ATTNLENS_MAX_RECORD_MB", "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_MB
    except ValueError:
        mb = DEFAULT_MB
    return int(mb * 2**20)


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
            f"{limit / 2**20:.3g} MB (ATTNLENS_MAX_RECORD_MB); {hint}"
        )
