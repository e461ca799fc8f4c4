"""Schema names of the records, checked when a record is read back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def check_schema(data: Any, schemas: Sequence[str]) -> str:
    """The record's schema, or a ValueError when it is not one of `schemas` (a record of
    another kind, or a version this attnlens cannot read)."""
    if not isinstance(data, dict):
        raise ValueError(f"a record is a JSON object, got {type(data).__name__}")
    schema = data.get("schema")
    if schema not in schemas:
        raise ValueError(f"expected schema {' or '.join(map(repr, schemas))}, got {schema!r}")
    return str(schema)
