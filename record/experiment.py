"""The record of one head experiment (attnlens.experiment/1): a score per head, a summary,
further tables (a pruning curve, a correlation table), and notes on what could not be measured.

`attnlens experiment NAME MODEL --json` prints it; the app draws it and offers it as JSON and
CSV; the cache keeps it. Plain data: numpy and pandas only.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from attnlens.record.schema import check_schema

SCHEMA = "attnlens.experiment/1"
HEAD_KEYS = ("kind", "layer", "head")  # every row of `heads` starts with these


@dataclass(frozen=True, eq=False)
class ExperimentResult:
    """What one experiment measured on one model and input set.

    heads: one row per head, columns HEAD_KEYS then one column per score (NaN: not measured).
    summary: the headline numbers (JSON scalars or lists of them).
    tables: further tables by name, e.g. "pruning" (score against heads removed).
    notes: what the user should know, e.g. a score this model cannot give and why.
    """

    experiment: str
    model: str
    params: dict[str, Any]
    heads: pd.DataFrame
    summary: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    seconds: float | None = None  # how long it took to compute (not to read from the cache)

    def __post_init__(self) -> None:
        missing = [k for k in HEAD_KEYS if k not in self.heads.columns]
        if missing:
            raise ValueError(f"the heads table lacks the columns {missing}")

    def score(self, column: str, kind: str, layer: int, head: int) -> float:
        """One head's score (NaN when it was not measured)."""
        h = self.heads
        row = h[(h["kind"] == kind) & (h["layer"] == layer) & (h["head"] == head)]
        return float(row[column].iloc[0]) if len(row) and column in row else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "experiment": self.experiment,
            "model": self.model,
            "params": self.params,
            "summary": _plain(self.summary),
            "heads": _rows(self.heads),
            "tables": {name: _rows(t) for name, t in self.tables.items()},
            "notes": list(self.notes),
            "seconds": self.seconds,
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> ExperimentResult:
        check_schema(data, (SCHEMA,))
        return cls(
            str(data["experiment"]),
            str(data["model"]),
            dict(data.get("params", {})),
            _frame(data["heads"], HEAD_KEYS),
            dict(data.get("summary", {})),
            {str(k): _frame(v) for k, v in data.get("tables", {}).items()},
            tuple(str(n) for n in data.get("notes", [])),
            data.get("seconds"),
        )

    @classmethod
    def from_json(cls, text: str) -> ExperimentResult:
        return cls.from_dict(json.loads(text))


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars and arrays to Python, NaN and infinity to null."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A table as a list of JSON objects, one per row."""
    records: list[dict[str, Any]] = _plain(frame.to_dict(orient="records"))
    return records


def _frame(rows: Any, columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """Rows back into a table; null scores read back as NaN."""
    if not isinstance(rows, list):
        raise ValueError(f"a table is a list of rows, got {type(rows).__name__}")
    frame = pd.DataFrame(rows, columns=list(columns) if not rows else None)
    for column in frame.columns:
        if column not in HEAD_KEYS and frame[column].dtype == object:
            converted = pd.to_numeric(frame[column], errors="coerce")
            if converted.notna().sum() == frame[column].notna().sum():
                frame[column] = converted  # a numeric column whose nulls made it `object`
    return frame
