"""`attnlens experiment NAME MODEL`: one of the head experiments (docs/experiments.md) as a
table, or `--json` as one attnlens.experiment/1 object; a progress bar on standard error."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

import attnlens
from attnlens.analysis.agreement import paper_table
from attnlens.analysis.experiments.cache import ResultCache
from attnlens.analysis.experiments.catalog import DEFAULT_N, NAMES, TITLES, Outcome, run_experiment
from attnlens.app.cli.experiment_figures import experiment_figure
from attnlens.app.cli.output import write_text
from attnlens.app.cli.plot import FORMATS, write_figure
from attnlens.model.lenses.lens import Lens
from attnlens.model.progress import bar as progress_bar

IMAGE_WIDTH, IMAGE_HEIGHT = 1100, 540


def add_experiment_parser(sub: Any) -> None:
    """The `experiment` subcommand."""
    p = sub.add_parser("experiment", help="measure what the head literature found, on MODEL")
    p.add_argument("name", metavar="NAME", choices=NAMES, help="one of " + ", ".join(NAMES))
    p.add_argument("model", metavar="MODEL")
    defaults = ", ".join(f"{k} {v}" for k, v in DEFAULT_N.items())
    p.add_argument("--n", type=int, help=f"inputs to measure on (default: {defaults})")
    p.add_argument("--seed", type=int, default=0, help="seed of the inputs (default: 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--text", help="the input the figure shows (default: the model's example)")
    p.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="also write the heads as .csv or the whole record as .json",
    )
    p.add_argument(
        "--figure", type=Path, metavar="FILE", help="also draw the figure: " + ", ".join(FORMATS)
    )
    p.add_argument("--no-cache", action="store_true", help="recompute even if cached")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)")


def cmd_experiment(args: argparse.Namespace) -> None:
    """Run (or read back) the experiment, print it, write what was asked."""
    if args.out is not None and args.out.suffix.lower() not in (".csv", ".json"):
        raise ValueError(f"--out must end in .csv or .json, got {args.out.name!r}")
    if args.figure is not None and args.figure.suffix.lower() not in FORMATS:
        raise ValueError(f"--figure must end in {', '.join(FORMATS)}, got {args.figure.name!r}")
    lens = attnlens.load(args.model, device=args.device)
    cache = ResultCache(None) if args.no_cache else None
    with progress_bar(total=1, desc=args.name) as bar:  # a terminal's bar; none in CI or a file

        def progress(done: int, total: int, what: str) -> None:
            bar.total, bar.n = total, done
            bar.set_description(what, refresh=False)
            bar.refresh()

        outcome = run_experiment(lens, args.name, args.n, args.seed, progress, cache)
    result = outcome.result
    if args.out is not None:
        if args.out.suffix.lower() == ".csv":
            write_text(result.heads.to_csv(index=False), args.out)
        else:
            write_text(result.to_json(indent=2) + "\n", args.out)
    if args.figure is not None:
        write_figure(_figure(lens, outcome, args.text), args.figure)
    if args.json:
        print(json.dumps({**result.to_dict(), "cached": outcome.cached}, allow_nan=False))
    else:
        print(report(outcome))


def _figure(lens: Lens, outcome: Outcome, text: str | None) -> go.Figure:
    """The figure, sized for a page when drawn as an image (the app fits it to the window)."""
    fig = experiment_figure(lens, outcome.result, lens.example if text is None else text)
    return fig.update_layout(width=IMAGE_WIDTH, height=max(IMAGE_HEIGHT, fig.layout.height or 0))


def report(outcome: Outcome) -> str:
    """The result for a terminal: what ran, the summary, every head's scores, the notes."""
    r = outcome.result
    took = "" if r.seconds is None else f"computed in {r.seconds:.1f} s"
    where = f"read from the cache ({took})" if outcome.cached else took
    lines = [
        TITLES[r.experiment],
        f"{r.model}: n={r.params.get('n')}, seed {r.params.get('seed')}; {where}",
        "",
    ]
    lines += [f"{k}: {_shown(v)}" for k, v in r.summary.items()]
    with pd.option_context("display.width", 120, "display.max_rows", 500):
        lines += ["", r.heads.to_string(index=False, float_format=lambda v: f"{v:.4f}")]
        if r.experiment == "explanation":
            wide = paper_table(r.tables["spearman"])
            lines += [
                "",
                "Spearman's ρ with erasure, held-out mean ± std (Abnar & Zuidema, Table 1):",
                wide.to_string(index=False),
            ]
        for name, table in r.tables.items():
            if table.empty:
                continue
            lines += [
                "",
                f"{name}:",
                table.to_string(index=False, float_format=lambda v: f"{v:.4f}"),
            ]
    lines += [f"note: {note}" for note in r.notes]
    return "\n".join(lines)


def _shown(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_shown(v)}" for k, v in value.items())
    return str(value)
