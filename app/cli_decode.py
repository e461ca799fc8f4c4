"""`attnlens decode`: greedy, beam search or sampling, every step recorded (attnlens.decode/1)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import model
from model.decoding import ABLATE_HELP, MAX_BEAM


def add_decode_parser(sub: Any) -> None:
    """The `decode` subcommand with every flag of CONTRACTS.md."""
    p = sub.add_parser("decode", help="decode TEXT step by step, recording beams and attention")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("text", metavar="TEXT")
    p.add_argument(
        "--strategy", choices=("greedy", "beam", "sample"), default="greedy", help="default: greedy"
    )
    p.add_argument("--beam-size", type=int, default=4, metavar="K", help=f"1-{MAX_BEAM} (beam)")
    p.add_argument("--max-len", type=int, metavar="N", help="most tokens (default: model's)")
    p.add_argument(
        "--length-penalty", type=float, default=0.0, metavar="A", help="GNMT α ≥ 0, 0 = none"
    )
    p.add_argument("--temperature", type=float, default=1.0, metavar="T", help="> 0 (sample)")
    p.add_argument("--top-k", type=int, metavar="K", help="keep the K likeliest (sample)")
    p.add_argument("--top-p", type=float, metavar="P", help="nucleus, in (0, 1] (sample)")
    p.add_argument("--seed", type=int, metavar="S", help="sampling seed (default: a fresh one)")
    p.add_argument(
        "--force",
        nargs="+",
        action="extend",
        type=_force_item,
        metavar="STEP=TOKEN",
        help="emit TOKEN at STEP (from 0) and decode on from there",
    )
    p.add_argument(
        "--ablate",
        nargs="+",
        action="extend",
        metavar="LAYER.HEAD",
        help=f"zero a head: {ABLATE_HELP}",
    )
    p.add_argument(
        "--out", type=Path, metavar="PATH", help="write the JSON here instead of standard output"
    )
    p.add_argument("--device", default="auto", help="auto, cpu or cuda (default: auto)")


def cmd_decode(args: argparse.Namespace) -> None:
    """Decode and print (or write) the attnlens.decode/1 JSON."""
    force: dict[int, str] = {}
    for step, token in args.force or ():
        if step in force:
            raise model.InputError(f"step {step} is forced twice ({force[step]!r} and {token!r})")
        force[step] = token
    lens = model.load(args.model, device=args.device)
    run = lens.decode(
        args.text,
        strategy=args.strategy,
        beam_size=args.beam_size,
        max_len=args.max_len,
        length_penalty=args.length_penalty,
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
        force=force,
        ablate=args.ablate or [],
    )
    for warning in run.warnings:
        print(f"attnlens: warning: {warning}", file=sys.stderr)
    text = run.to_json() + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text)


def _force_item(text: str) -> tuple[int, str]:
    """STEP=TOKEN; the token may itself contain '=' or be a space."""
    step, sep, token = text.partition("=")
    if not sep or not step.strip().isdigit() or not token:
        raise argparse.ArgumentTypeError(f"--force expects STEP=TOKEN (e.g. 0=a), got {text!r}")
    return int(step), token
