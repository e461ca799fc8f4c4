"""Package attributes imported on first use, so that reading records does not load torch.

`viz` needs only the record types (`model.trace`, `model.decoding.record`), which are numpy and
pandas; a package's torch-backed names (the Transformer, the loaders, the decoding loop) are
looked up here when something first asks for them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports each name in homes from its module when asked."""

    def module_getattr(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(homes[name]), name)

    return module_getattr
