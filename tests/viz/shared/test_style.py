"""Figures dressed for a projector (every text large) and for a file (a theme's own template)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import plotly.graph_objects as go
import pytest

from attnlens import analysis, viz
from attnlens.record.trace import Trace
from attnlens.viz.decoding.decode_step import step_attention, up_to_step
from attnlens.viz.lecture.sdpa_steps import attention_steps, step_figure
from attnlens.viz.shared.margins import plain_lines
from attnlens.viz.shared.style import PROJECTOR_FONT, PROJECTOR_HEIGHT, exported, projector


def views(trace: Trace, synth: type) -> dict[str, Callable[[], go.Figure]]:
    """Every figure the app shows, on synthetic records."""
    stats = analysis.head_statistics(trace)
    run = synth.beam_run()
    enc = trace.encoder_self
    assert enc is not None
    steps = attention_steps(enc[0, 0], enc[0, 1], enc[0, 2])
    return {
        "heatmap": lambda: viz.head_heatmap(trace, "cross", 0, 0, (1, 0)),
        "lines": lambda: viz.lines_view(trace, "cross", 0, heads=[0]),
        "model": lambda: viz.model_view(trace, "encoder_self", (0, 0)),
        "alignment": lambda: viz.cross_alignment(trace),
        "masks": lambda: viz.masks_view(trace, "decoder_self"),
        "positional": lambda: viz.positional_view(trace),
        "rollout": lambda: viz.rollout_view(trace, "encoder_self"),
        "stats": lambda: viz.head_stats_chart(stats, "encoder_self", "entropy"),
        "beam": lambda: up_to_step(viz.beam_tree(run), 1),
        "candidates": lambda: viz.candidate_bars(run, 1),
        "step": lambda: step_attention(run, 1, 0, 0),
        "compare": lambda: viz.compare_runs({"beam": run, "greedy": synth.greedy_run()}),
        "decoding": lambda: viz.decoding_alignment(run),
        "sdpa": lambda: step_figure(steps, "scaled", trace.src_tokens, trace.src_tokens),
        "training": lambda: viz.training_curve([1, 10], [3.0, 1.0], [1, 10], {"exact": [0, 1]}),
    }


def fonts(fig: go.Figure) -> Iterator[tuple[str, Any]]:
    """(where, size) of every text of a figure that Plotly draws."""
    layout = fig.layout
    yield "font", layout.font.size
    yield "legend", layout.legend.font.size
    if layout.title.subtitle.text:  # drawn at 0.7 of the title's size where it sets none
        yield "subtitle", layout.title.subtitle.font.size
    for a in layout.annotations:
        yield f"annotation {a.text!r}", a.font.size
    axes = [k for k in layout if k.startswith(("xaxis", "yaxis"))]
    for name in axes:
        axis = layout[name]
        if axis.visible is not False:
            yield f"{name} ticks", axis.tickfont.size
            yield f"{name} title", axis.title.font.size
    for name in [k for k in layout if k.startswith("coloraxis")]:
        yield f"{name} bar", layout[name].colorbar.tickfont.size
    for t in fig.data:
        drawn_text = getattr(t, "text", None) is not None and (
            "text" in (getattr(t, "mode", None) or "")
            or getattr(t, "texttemplate", None)
            or t.type == "bar"
        )
        if drawn_text:
            yield f"{t.type} {t.name} text", t.textfont.size
        if t.type == "heatmap" and t.showscale is not False and not t.coloraxis:
            yield f"{t.name} colour bar", t.colorbar.tickfont.size


@pytest.mark.parametrize(
    "name",
    ["heatmap", "lines", "model", "alignment", "masks", "positional", "rollout", "stats",
     "beam", "candidates", "step", "compare", "decoding", "sdpa", "training"],
)  # fmt: skip
def test_every_text_of_every_view_is_projector_sized(name: str, trace: Trace, synth: type) -> None:
    """The issue: in presentation mode ticks stayed ~14 px while titles grew."""
    fig = projector(views(trace, synth)[name](), PROJECTOR_FONT)
    small = {where: size for where, size in fonts(fig) if (size or 0) < PROJECTOR_FONT}
    assert not small
    assert fig.layout.title.font.size > PROJECTOR_FONT
    assert fig.layout.height >= 520


def test_a_projector_thins_position_ticks_further(synth: type) -> None:
    tr = synth.make_trace(src=[f"w{i}" for i in range(500)], L=1, H=1)
    fig = viz.head_heatmap(tr, "encoder_self", 0, 0)
    before = len(fig.layout.yaxis.tickvals)
    projector(fig, PROJECTOR_FONT)
    after = fig.layout.yaxis.tickvals
    assert len(after) < before
    room = fig.layout.height - 200  # px, roughly, for the rows
    assert room / len(after) >= 1.5 * PROJECTOR_FONT  # labels a line and a half apart


def test_a_projector_puts_an_axis_title_longer_than_its_axis_in_two_lines(synth: type) -> None:
    """The issue: 'decoder position: input → produced' at 24 px ran past a 14-row plot into
    the figure's title (a 14-row plot now keeps 461 px, where the title fits: 8 rows)."""
    tr = synth.make_trace(src=list("abcdefgh"), tgt=["<s>", *"abcdefgh"])
    cross = viz.head_heatmap(tr, "cross", 0, 0)
    assert "<br>" not in cross.layout.yaxis.title.text
    projector(cross, PROJECTOR_FONT)
    top, bottom = plain_lines(cross.layout.yaxis.title.text)
    assert (top, bottom) == ("decoder position:", "input → produced")
    tall = viz.head_heatmap(
        synth.make_trace(src=[f"w{i}" for i in range(40)]), "encoder_self", 0, 0
    )
    assert projector(tall, PROJECTOR_FONT).layout.yaxis.title.text == "query"  # short: one line


def test_a_projector_keeps_a_grids_plot_as_tall_as_it_was(synth: type) -> None:
    """The issue: margins doubled with the text left a 7-row heatmap 138 px of its 546."""
    tr = synth.make_trace(src=list("abcdef"), tgt=["<s>", *"abcdef"])
    fig = viz.head_heatmap(tr, "cross", 0, 0, (5, 4, 3, 2, 1, 0))
    before = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    projector(fig, PROJECTOR_FONT)
    after = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert after >= before or fig.layout.height == PROJECTOR_HEIGHT[1]
    assert after >= 0.8 * before


@pytest.mark.parametrize("dark", [False, True])
def test_an_exported_figure_carries_its_own_theme_and_room_for_labels(
    trace: Trace, dark: bool
) -> None:
    import plotly.io as pio

    shown = viz.masks_view(trace, "decoder_self")
    shown.update_layout(plot_bgcolor="rgba(0,0,0,0)", paper_bgcolor="rgba(0,0,0,0)")
    default = pio.templates.default
    pio.templates.default = "none"  # as Streamlit replaces it: no automargin, no colours
    try:
        out = exported(shown, dark)
    finally:
        pio.templates.default = default
    assert out.layout.template.layout.paper_bgcolor == ("rgb(17,17,17)" if dark else "white")
    assert out.layout.paper_bgcolor == out.layout.plot_bgcolor != "rgba(0,0,0,0)"
    axes = [out.layout[k] for k in out.layout if k.startswith(("xaxis", "yaxis"))]
    assert axes and all(a.automargin is True for a in axes)
    assert shown.layout.paper_bgcolor == "rgba(0,0,0,0)"  # the shown figure is untouched
