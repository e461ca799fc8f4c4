"""`attnlens decode`: greedy, beam search or sampling, every step recorded (attnlens.decode/2).

Its flags are the fields of `DecodeRequest`, one flag each (`--beam-size` for beam_size), with
the help and metavar of the field's Knob: a new decoding setting needs no edit here.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

import attnlens
from attnlens.app.cli.output import text_out
from attnlens.model.decoding.heads import ABLATE_HELP
from attnlens.model.decoding.request import DEFAULT_STRATEGY, STRATEGIES, DecodeRequest
from attnlens.record.export import write_json


def add_decode_parser(sub: Any) -> None:
    """The `decode` subcommand: MODEL TEXT, then a flag per DecodeRequest field."""
    p = sub.add_parser("decode", help="decode TEXT step by step, recording beams and attention")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("text", metavar="TEXT")
    hints = typing.get_type_hints(DecodeRequest)
    for f in dataclasses.fields(DecodeRequest):
        _add_flag(p, f, hints[f.name])
    p.add_argument(
        "--out", type=Path, metavar="PATH", help="write the JSON here instead of standard output"
    )
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)")


def _add_flag(p: argparse.ArgumentParser, f: dataclasses.Field[Any], hint: Any) -> None:
    """One field's flag; its type read off the field's annotation."""
    knob, flag = f.metadata["knob"], "--" + f.name.replace("_", "-")
    default = None if f.default is dataclasses.MISSING else f.default
    suffix = "" if default is None else f"; default {default}"
    if knob.strategies != STRATEGIES:
        suffix += f" ({', '.join(knob.strategies)} only)"
    if f.name == "strategy":
        p.add_argument(flag, choices=STRATEGIES, default=DEFAULT_STRATEGY,
                       help=f"default: {DEFAULT_STRATEGY}")  # fmt: skip
    elif f.name == "force":
        p.add_argument(flag, nargs="+", action="extend", type=_force_item, metavar=knob.metavar,
                       help=knob.help)  # fmt: skip
    elif f.name == "ablate":
        p.add_argument(flag, nargs="+", action="extend", metavar=knob.metavar,
                       help=f"zero a head: {ABLATE_HELP}")  # fmt: skip
    elif f.name == "generation_config":
        p.add_argument(flag, type=_json_object, metavar="JSON", help=knob.help)
    else:
        kind = int if int in _types(hint) else float
        p.add_argument(flag, type=kind, default=default, metavar=knob.metavar,
                       help=knob.help + suffix)  # fmt: skip


def _types(hint: Any) -> tuple[Any, ...]:
    """The types an annotation admits (`int | None` gives int and NoneType)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return typing.get_args(hint)
    return (hint,)


def cmd_decode(args: argparse.Namespace) -> None:
    """Decode and print (or write) the attnlens.decode/2 JSON."""
    force: dict[int, str] = {}
    for step, token in args.force or ():
        if step in force:
            raise attnlens.InputError(
                f"step {step} is forced twice ({force[step]!r} and {token!r})"
            )
        force[step] = token
    settings = {f.name: getattr(args, f.name) for f in dataclasses.fields(DecodeRequest)}
    settings.update(force=force, ablate=args.ablate or [])
    lens = attnlens.load(args.model, device=args.device)
    run = lens.decode(args.text, **settings)
    for warning in run.warnings:
        print(f"attnlens: warning: {warning}", file=sys.stderr)
    with text_out(args.out) as handle:  # piece by piece: a long beam search is a large record
        write_json(run.json_tree(), handle)


def _force_item(text: str) -> tuple[int, str]:
    """STEP=TOKEN; the token may itself contain '=' or be a space."""
    step, sep, token = text.partition("=")
    if not sep or not step.strip().isdigit() or not token:
        raise argparse.ArgumentTypeError(f"--force expects STEP=TOKEN (e.g. 0=a), got {text!r}")
    return int(step), token


def _json_object(text: str) -> dict[str, Any]:
    """A JSON object given on the command line."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"expects a JSON object, got {text!r} ({err})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expects a JSON object, got {text!r}")
    return value
