"""`attnlens trace MODEL TEXT`: every layer's and head's attention as an attnlens.trace/1 record,
in JSON, CSV or NPZ."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import attnlens
from attnlens.app.cli.output import binary_out, text_out
from attnlens.app.cli.trace_args import add_trace_inputs, trace_of
from attnlens.model.lenses.lens import RECORD_MODES
from attnlens.record.export import write_chunks, write_json


def add_trace_parser(sub: Any) -> None:
    trace = sub.add_parser("trace", help="record every layer's and head's attention for TEXT")
    trace.add_argument("model", metavar="MODEL")
    trace.add_argument("text", metavar="TEXT")
    trace.add_argument("--target", help="teacher-force this target (encoder-decoder models)")
    add_trace_inputs(trace)
    trace.add_argument("--format", choices=("json", "csv", "npz"), default="json")
    trace.add_argument(
        "--record",
        choices=RECORD_MODES,
        default="auto",
        help="weights: every head's weights; scores: what they were computed from (queries, "
        "keys, each row's log-sum-exp), which grows with the input's length, not its square; "
        "auto (default): the weights where they fit ATTNLENS_MAX_RECORD_MB, else the scores",
    )
    trace.add_argument("--out", type=Path, help="write here instead of standard output")
    trace.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)")


def cmd_trace(args: argparse.Namespace) -> None:
    lens = attnlens.load(args.model, device=args.device)
    tr = trace_of(lens, args)
    for warning in tr.warnings:
        print(f"attnlens: warning: {warning}", file=sys.stderr)
    write_trace(tr, args.format, args.out)


def write_trace(tr: attnlens.Trace, fmt: str, out: Path | None) -> None:
    """The record as JSON, CSV or NPZ, written piece by piece: memory for one piece at a time,
    whatever the record's size (the CSV of a 510-token MiniLM trace is about 900 MB)."""
    if fmt == "npz":
        with binary_out(out) as handle:
            tr.write_npz(handle)
    elif fmt == "csv":
        with text_out(out) as handle:
            write_chunks(tr.csv_chunks(), handle)
    else:
        with text_out(out) as handle:
            write_json(tr.json_tree(), handle)
