"""`attnlens plot`: one view of viz for TEXT, written as HTML, Plotly JSON, PNG or SVG."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

import attnlens
from attnlens import analysis, viz
from attnlens.app.cli.output import write_bytes, write_text
from attnlens.app.cli.trace_args import add_trace_inputs, trace_of
from attnlens.model.decoding.heads import OLD_KINDS
from attnlens.record.norms import MEASURES
from attnlens.record.trace import Kind, Trace
from attnlens.viz.heads.segments import pair_heatmap
from attnlens.viz.shared.html_file import standalone_html
from attnlens.viz.shared.vector_cells import VECTOR_CELLS, heatmap_cells, vector_cells

# --kind takes the records' names; the older encoder and decoder are still read
KINDS: dict[str, Kind] = {
    "encoder_self": "encoder_self",
    "decoder_self": "decoder_self",
    "cross": "cross",
    **OLD_KINDS,
}
FORMATS = (".html", ".json", ".png", ".svg")
SELF_KINDS: tuple[Kind, ...] = ("encoder_self", "decoder_self")


def add_plot_parser(sub: Any) -> None:
    """The `plot` subcommand (docs/cli.md)."""
    p = sub.add_parser("plot", help="draw one view of TEXT's attention to a file")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("text", metavar="TEXT")
    names = sorted([*VIEWS, *DECODE_VIEWS])
    p.add_argument("--view", required=True, choices=names, metavar="VIEW",
                   help="one of " + ", ".join(names))  # fmt: skip
    p.add_argument("--layer", type=int, metavar="L", help="layer (default: the last)")
    p.add_argument("--head", type=int, metavar="H", help="head (default: 0, or all for lines)")
    p.add_argument(
        "--kind",
        choices=list(KINDS),
        metavar="KIND",
        help="encoder_self, decoder_self or cross (encoder and decoder are read too; default: "
        "per view)",
    )
    p.add_argument("--measure", choices=MEASURES, default="weight",
                   help="heatmap: weight (αᵢⱼ) or norm (αᵢⱼ‖f(xⱼ)‖, what each key gave the "
                   "head's output; default: weight)")  # fmt: skip
    p.add_argument("--target", help="teacher-force this target (encoder-decoder models)")
    add_trace_inputs(p)
    p.add_argument("--out", type=Path, help="FILE.html, .json, .png or .svg (default: JSON out)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)")
    p.add_argument("--step", type=int, default=0, metavar="S", help="decoding step (candidates)")
    p.add_argument("--beam-size", type=int, default=4, metavar="K", help="beam, compare (4)")


def cmd_plot(args: argparse.Namespace) -> None:
    """Trace TEXT, build the view, write it."""
    if args.out is not None and args.out.suffix.lower() not in FORMATS:
        raise ValueError(f"--out must end in {', '.join(FORMATS)}, got {args.out.name!r}")
    lens = attnlens.load(args.model, device=args.device)
    if args.view in DECODE_VIEWS:
        write_figure(DECODE_VIEWS[args.view](lens, args.text, args.beam_size, args.step), args.out)
        return
    trace = trace_of(lens, args)
    for warning in trace.warnings:
        print(f"attnlens: warning: {warning}", file=sys.stderr)
    kind = None if args.kind is None else KINDS[args.kind]
    if args.measure != "weight" and args.view != "heatmap":
        raise ValueError(f"--measure {args.measure} draws the heatmap view, not {args.view}")
    if args.view == "heatmap":
        k = _kind(trace, kind)
        fig = viz.head_heatmap(trace, k, _layer(trace, k, args.layer), args.head or 0,
                               measure=args.measure)  # fmt: skip
    else:
        fig = VIEWS[args.view](trace, kind, args.layer, args.head)
    write_figure(fig, args.out)


def write_figure(fig: go.Figure, out: Path | None) -> None:
    """Self-contained HTML, Plotly JSON, or a static image through kaleido and a Chromium."""
    if out is None:
        sys.stdout.write(fig.to_json() + "\n")
        return
    suffix = out.suffix.lower()
    if suffix == ".html":
        write_text(standalone_html(fig), out)  # opens offline, plotly.js gzipped inside
    elif suffix == ".json":
        write_text(str(fig.to_json()), out)
    else:
        write_bytes(_image(fig, suffix[1:], out), out)


def _image(fig: go.Figure, fmt: str, out: Path) -> bytes:
    try:
        import kaleido  # noqa: F401  (only to say clearly when it is missing)
    except ImportError:
        raise ValueError(f"cannot write {out.name}: kaleido is not installed; use .html") from None
    if fmt == "svg" and heatmap_cells(fig) <= VECTOR_CELLS:
        fig = vector_cells(fig)  # the cells as vectors, as the app's SVG downloads
    try:
        image: bytes = fig.to_image(format=fmt)
    except Exception as err:  # kaleido fails in many ways without a browser; say so in one line
        reason = next((line for line in str(err).splitlines() if line.strip()), type(err).__name__)
        raise ValueError(f"cannot write {out.name}: {reason.strip()} Use .html or .json") from None
    return image


def _kind(trace: Trace, kind: Kind | None, allowed: tuple[Kind, ...] | None = None) -> Kind:
    """The asked kind, else the last the record holds among those the view accepts."""
    options = [k for k in trace.kinds if allowed is None or k in allowed]
    if kind is None:
        if not options:
            raise ValueError(f"{trace.model.name} records none of {', '.join(allowed or ())}")
        return options[-1] if allowed is None else options[0]
    if allowed is not None and kind not in allowed:
        names = ", ".join(allowed)
        raise ValueError(f"this view takes --kind {names}, got {kind}")
    return kind


def _layer(trace: Trace, kind: Kind, layer: int | None) -> int:
    """The asked layer, else the last of this kind's stack (an encoder and its decoder may
    have different depths)."""
    return trace.model.shape(kind)[0] - 1 if layer is None else layer


def _heatmap(tr: Trace, kind: Kind | None, layer: int | None, head: int | None) -> go.Figure:
    k = _kind(tr, kind)
    return viz.head_heatmap(tr, k, _layer(tr, k, layer), head or 0)


def _model(tr: Trace, kind: Kind | None, layer: int | None, head: int | None) -> go.Figure:
    k = _kind(tr, kind)
    selected = None if layer is None and head is None else (_layer(tr, k, layer), head or 0)
    return viz.model_view(tr, k, selected=selected)


def _lines(tr: Trace, kind: Kind | None, layer: int | None, head: int | None) -> go.Figure:
    k = _kind(tr, kind)
    return viz.lines_view(tr, k, _layer(tr, k, layer), None if head is None else [head])


def _pair(tr: Trace, kind: Kind | None, layer: int | None, head: int | None) -> go.Figure:
    _kind(tr, kind or "encoder_self", ("encoder_self",))
    return pair_heatmap(tr, _layer(tr, "encoder_self", layer), head or 0)


def _alignment(tr: Trace, kind: Kind | None, layer: int | None, head: int | None) -> go.Figure:
    _kind(tr, kind or "cross", ("cross",))
    return viz.cross_alignment(tr, layer, head)


def _masks(tr: Trace, kind: Kind | None, layer: int | None, head: int | None) -> go.Figure:
    return viz.masks_view(tr, _kind(tr, kind))


def _positional(tr: Trace, kind: Kind | None, layer: int | None, head: int | None) -> go.Figure:
    return viz.positional_view(tr)


def _rollout(tr: Trace, kind: Kind | None, layer: int | None, head: int | None) -> go.Figure:
    return viz.rollout_view(tr, _kind(tr, kind, SELF_KINDS), "rollout", layer)


def _flow(tr: Trace, kind: Kind | None, layer: int | None, head: int | None) -> go.Figure:
    return viz.rollout_view(tr, _kind(tr, kind, SELF_KINDS), "flow", layer)


def _stats(tr: Trace, kind: Kind | None, layer: int | None, head: int | None) -> go.Figure:
    k = _kind(tr, kind)
    return viz.head_stats_chart(analysis.head_statistics(tr, [k]), k, "entropy")


View = Callable[[Trace, Kind | None, int | None, int | None], go.Figure]
VIEWS: dict[str, View] = {
    "heatmap": _heatmap,
    "model": _model,
    "lines": _lines,
    "alignment": _alignment,
    "masks": _masks,
    "positional": _positional,
    "rollout": _rollout,
    "flow": _flow,
    "stats": _stats,
    "pair": _pair,
}


def _beam(lens: attnlens.Lens, text: str, beam_size: int, step: int) -> go.Figure:
    return viz.beam_tree(lens.decode(text, strategy="beam", beam_size=beam_size))


def _candidates(lens: attnlens.Lens, text: str, beam_size: int, step: int) -> go.Figure:
    return viz.candidate_bars(lens.decode(text, strategy="beam", beam_size=beam_size), step)


def _compare(lens: attnlens.Lens, text: str, beam_size: int, step: int) -> go.Figure:
    greedy = lens.decode(text, strategy="greedy")
    beam = lens.decode(text, strategy="beam", beam_size=beam_size)
    return viz.compare_runs({"greedy": greedy, f"beam {beam_size}": beam})


def _decode_alignment(lens: attnlens.Lens, text: str, beam_size: int, step: int) -> go.Figure:
    return viz.decoding_alignment(lens.decode(text, strategy="beam", beam_size=beam_size))


DECODE_VIEWS: dict[str, Callable[[attnlens.Lens, str, int, int], go.Figure]] = {
    "beam": _beam,
    "decode-alignment": _decode_alignment,
    "candidates": _candidates,
    "compare": _compare,
}
