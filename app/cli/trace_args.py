"""What `trace` and `plot` read besides TEXT: a sentence pair's second text, and a target
given as tokens (a decode record's output_tokens), read back exactly."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import attnlens
from attnlens.model.lenses.lens import check_mode
from attnlens.record.decode import DecodeRun
from attnlens.record.trace import Trace


def add_trace_inputs(parser: Any) -> None:
    """--pair and --target-tokens."""
    parser.add_argument(
        "--pair", metavar="TEXT", help="second text of a sentence pair (encoder models: BERT)"
    )
    parser.add_argument(
        "--target-tokens", metavar="JSON|RECORD",
        help="teacher-force these tokens: a JSON list of token strings, or a decode record "
        "(attnlens decode --out) whose output tokens are read back exactly",
    )  # fmt: skip


def trace_of(lens: attnlens.Lens, args: argparse.Namespace) -> Trace:
    """The trace the flags ask for."""
    tokens = None if args.target_tokens is None else target_tokens(args.target_tokens)
    record = check_mode(getattr(args, "record", "weights"))  # trace asks; plot draws weights
    return lens.trace(
        args.text, target=args.target, target_tokens=tokens, pair=args.pair, record=record
    )


def target_tokens(value: str) -> list[str]:
    """Tokens from a JSON list, or the output tokens of a decode record file."""
    if value.lstrip().startswith("["):
        data: Any = _json(value, "--target-tokens")
    else:
        path = Path(value)
        if not path.is_file():
            raise attnlens.InputError(
                f"--target-tokens takes a JSON list of tokens or a decode record file; "
                f"{value!r} is neither"
            )
        record = _json(path.read_text(encoding="utf-8"), str(path))
        try:
            data = list(DecodeRun.from_dict(record).output_tokens)
        except (ValueError, KeyError, TypeError) as err:
            raise attnlens.InputError(f"{path} is not a decode record ({err})") from None
    if not isinstance(data, list) or not all(isinstance(t, str) for t in data):
        raise attnlens.InputError("--target-tokens must be a JSON list of token strings")
    return data


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise attnlens.InputError(f"{what} is not valid JSON ({err.msg} at {err.pos})") from None
