"""`attnlens models`: the models that load by name."""

from __future__ import annotations

import argparse
import json
from typing import Any

import attnlens


def add_models_parser(sub: Any) -> None:
    models = sub.add_parser("models", help="list the models that load by name")
    models.add_argument("--json", action="store_true", help="print JSON instead of a table")


def cmd_models(args: argparse.Namespace) -> None:
    entries = attnlens.bundled_models()
    if args.json:
        print(json.dumps([e.__dict__ for e in entries], indent=2))
        return
    for e in entries:
        print(f"{e.name:<12} {e.architecture:<16} {e.description}")
