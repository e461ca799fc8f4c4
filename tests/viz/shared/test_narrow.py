"""Figures reflowed for a phone (viz/shared/narrow.py), checked by their layout: panels side by
side stacked at the full width, colour bars under their plots, labels fitted, numbers dropped
from cells too narrow, a projector's text brought down. The browser's view of the same is
tests/app/web/browser/test_browser_phone.py."""

from __future__ import annotations

import itertools

from attnlens import viz
from attnlens.viz.shared.margins import text_px
from attnlens.viz.shared.narrow import LABEL_SHARE, PHONE_FONT, PHONE_PX, narrowed, panels_of
from attnlens.viz.shared.style import PROJECTOR_FONT, projector


def test_panels_side_by_side_are_stacked_each_the_full_width(synth: type) -> None:
    tr = synth.make_trace(src=list("abcdefgh"), tgt=["<s>", *"abcdefgh"])
    fig = viz.masks_view(tr, "decoder_self")  # padding, causal, applied: three in a row
    before = fig.layout.height or 450
    assert len({p.xdom for p in panels_of(fig)}) == 3
    narrowed(fig)
    panels = panels_of(fig)
    assert all(p.xdom == (0.0, 1.0) for p in panels)
    tops = [p.ydom[1] for p in panels]
    assert tops == sorted(tops, reverse=True)  # one under another, in order
    assert all(a.ydom[0] > b.ydom[1] for a, b in itertools.pairwise(panels))
    assert fig.layout.height > before


def test_a_heatmaps_colour_bar_lies_under_it_and_its_labels_fit(synth: type) -> None:
    tr = synth.make_trace(src=[f"token{i}" for i in range(12)], tgt=["<s>", "x", "y"])
    fig = viz.head_heatmap(tr, "encoder_self", 0, 0)
    narrowed(fig)
    bar = fig.data[0].colorbar
    assert bar.orientation == "h" and bar.y < 0 and bar.yanchor == "top"
    labels = fig.layout.yaxis.ticktext
    assert labels and all(text_px(t, 12) <= PHONE_PX * LABEL_SHARE for t in labels)
    assert fig.layout.yaxis.title.text is None  # moved under the title: "rows: query"
    assert "rows: query" in fig.layout.title.subtitle.text


def test_a_projectors_text_comes_down_and_narrow_cells_drop_their_numbers(synth: type) -> None:
    tr = synth.make_trace(src=[f"w{i}" for i in range(30)], tgt=["<s>", "x"])
    fig = viz.head_heatmap(tr, "encoder_self", 0, 0)
    fig.data[0].update(texttemplate="%{z:.2f}")  # numbers in 30 cells a row
    projector(fig, PROJECTOR_FONT)
    narrowed(fig)
    assert fig.layout.font.size == PHONE_FONT
    assert fig.layout.xaxis.tickfont.size <= PHONE_FONT
    assert fig.data[0].texttemplate is None  # 30 cells in ~230 px: too narrow for them
