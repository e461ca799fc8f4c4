"""The targets of issue 20, each printed with what was measured, its ratio and ✓ or ✗."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """One target: a ratio against a reference measured in the same run, or an absolute limit
    (reference None). Values in seconds, or a count for the load check."""

    name: str
    value: float
    limit: float  # the largest ratio (or value) that meets the target; for "at least", smallest
    reference: float | None = None
    unit: str = "s"
    at_least: bool = False  # the value must reach the limit (sessions), not stay under it

    @property
    def measure(self) -> float:
        return self.value / self.reference if self.reference else self.value

    @property
    def met(self) -> bool:
        return self.measure >= self.limit if self.at_least else self.measure <= self.limit


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    cores = os.cpu_count() or 1
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {cores} cores"


def _shown(value: float, unit: str) -> str:
    if value == float("inf"):
        return "never"
    return f"{value * 1000:.0f} ms" if unit == "s" else f"{value:g}"


def table(targets: list[Target]) -> str:
    """Every target on one line: ours, the reference, the ratio (or value) against the limit."""
    rows = [
        f"{'target':<58} {'attnlens':>10} {'reference':>10} {'measured':>9} {'limit':>9}",
    ]
    for t in targets:
        ref = _shown(t.reference, t.unit) if t.reference else "-"
        if t.reference:
            measured, limit = f"{t.measure:.2f}×", f"≤ {t.limit:g}×"
        else:
            measured = _shown(t.value, t.unit)
            limit = f"{'≥' if t.at_least else '≤'} {_shown(t.limit, t.unit)}"
        mark = "✓" if t.met else "✗"
        rows.append(
            f"{t.name:<58} {_shown(t.value, t.unit):>10} {ref:>10} {measured:>9} {limit:>9}  {mark}"
        )
    met = sum(t.met for t in targets)
    rows.append(f"{met} of {len(targets)} targets met; {load_average()}")
    return "\n".join(rows)
