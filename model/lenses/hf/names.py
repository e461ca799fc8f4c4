"""Telling a Hugging Face model name or folder apart, without importing transformers."""

from __future__ import annotations

import json
import re
from pathlib import Path

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


def is_hf_folder(path: Path) -> bool:
    """A folder holding a Hugging Face model: a config.json that names a model_type."""
    config = path / "config.json"
    if not config.is_file():
        return False
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and "model_type" in data


def looks_like_hub_id(name: str) -> bool:
    """'owner/name' or 'name', spelled as the hub spells repository ids."""
    return bool(HUB_ID.match(name)) and ".." not in name
