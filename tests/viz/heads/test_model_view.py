"""The model view: every head a tile of one heatmap, downsampled honestly, small at 512 tokens,
patterns visible at 500 tokens, square cells at any width."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plotly.colors import sample_colorscale

from attnlens.record.trace import Trace
from attnlens.viz import model_view
from attnlens.viz.heads.model_view import LEVELS, block_edges, block_share, decode, encode

# shares travel as bytes, evenly spaced in colour (∛share): half a step is at most this share
ONE_LEVEL = 3 * 0.5 / LEVELS


def tile_of(fig: go.Figure, layer: int, head: int, q: int, k: int) -> np.ndarray:
    """The shares of thumbnail (layer, head), q × k, read back from the one tiled heatmap."""
    grid = fig.data[0]
    px, py = round(1 / grid.dx), round(1 / grid.dy)  # cells per tile and gap
    z = decode(np.asarray(grid.z))
    return z[layer * py : layer * py + q, head * px : head * px + k]


def darkness(fig: go.Figure, share: float) -> float:
    """How far along the figure's colour scale a share is drawn, by lightness (0: the colour
    of 0, 1: the colour of 1): what a reader sees, whatever the scale's shape."""

    def lightness(z: float) -> float:
        scale = [[float(at), colour] for at, colour in fig.data[0].colorscale]
        byte = int(encode(np.array([z]))[0])
        colour = sample_colorscale(scale, [byte / (LEVELS + 1)])[0]
        r, g, b = (float(v) for v in colour[colour.index("(") + 1 : -1].split(","))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    return (lightness(0.0) - lightness(share)) / (lightness(0.0) - lightness(1.0))


def test_one_heatmap_holds_every_head_in_place(trace: Trace) -> None:
    fig = model_view(trace, "encoder_self")
    heatmaps = [t for t in fig.data if isinstance(t, go.Heatmap)]
    assert len(heatmaps) == 1 and len(fig.data) == 2  # the tiles, and the points naming them
    assert trace.encoder_self is not None
    for layer in range(2):
        for head in range(3):
            np.testing.assert_allclose(
                tile_of(fig, layer, head, 4, 4), trace.encoder_self[layer, head], atol=ONE_LEVEL
            )
    grid = fig.data[0]
    z = np.asarray(grid.z)
    px = round(1 / grid.dx)
    assert z.dtype == np.uint8  # one byte a cell on the wire
    assert px > 4 and (z[:, 4:px] == 0).all()  # a blank gap between heads
    blank = fig.data[0].colorscale[0][1]
    assert blank.replace(" ", "").endswith(",0)")  # drawn transparent


def test_thumbnail_centres_are_head_and_layer(trace: Trace) -> None:
    """Where a click lands says which head: tile (l, h) is centred on x = h, y = l."""
    fig = model_view(trace, "cross")  # 3 queries × 4 keys
    grid = fig.data[0]
    px, py = round(1 / grid.dx), round(1 / grid.dy)
    for layer in range(2):
        for head in range(3):
            centre_x = grid.x0 + (head * px + (4 - 1) / 2) * grid.dx
            centre_y = grid.y0 + (layer * py + (3 - 1) / 2) * grid.dy
            assert centre_x == pytest.approx(head) and centre_y == pytest.approx(layer)
    names = fig.data[1]
    assert list(zip(names.x, names.y, strict=True)) == [(h, r) for r in range(2) for h in range(3)]
    assert names.marker.opacity == 0 and "layer %{y} · head %{x}" in names.hovertemplate


def test_selected_head_is_outlined_around_its_tile_and_checked(trace: Trace) -> None:
    fig = model_view(trace, "decoder_self", selected=(1, 2))
    (shape,) = fig.layout.shapes
    assert (shape.xref, shape.yref) == ("x", "y")
    assert shape.x0 < 2 < shape.x1 and shape.y0 < 1 < shape.y1
    assert shape.x1 - shape.x0 < 1 and shape.y1 - shape.y0 < 1  # its own tile, not the next
    grid = fig.data[0]
    assert shape.x0 < grid.x0 + (2 * round(1 / grid.dx)) * grid.dx  # encloses the first cell
    with pytest.raises(ValueError, match="head 5"):
        model_view(trace, "decoder_self", selected=(0, 5))


def test_masked_blocks_stay_blank(trace: Trace) -> None:
    fig = model_view(trace, "decoder_self")
    assert np.isnan(tile_of(fig, 0, 0, 3, 3)[np.triu_indices(3, 1)]).all()


def test_cells_stay_square_at_any_width(trace: Trace) -> None:
    """y is anchored to x at the ratio of a tile's rows to its columns, so a cell is as tall
    as it is wide whatever width the browser gives the figure (no slivers on a phone)."""
    fig = model_view(trace, "cross")  # tiles of 3 × 4 cells
    grid, yaxis = fig.data[0], fig.layout.yaxis
    assert yaxis.scaleanchor == "x" and yaxis.constrain == "domain"
    assert fig.layout.xaxis.constrain == "domain"
    assert yaxis.scaleratio == pytest.approx(grid.dx / grid.dy)  # px per cell equal on both


def test_blocks_keep_rows_summing_to_one_and_a_diagonal_stays_sharp() -> None:
    T = 10
    eye = np.broadcast_to(np.eye(T, dtype=np.float32), (1, 1, T, T))
    edges = block_edges(T, 4)
    assert list(edges) == [0, 3, 6, 9, 10]
    share = block_share(eye, np.ones((T, T), dtype=bool), edges, edges)[0, 0]
    np.testing.assert_allclose(share, np.eye(4), atol=1e-6)


def test_twelve_by_twelve_heads_at_512_tokens_stay_small(synth: type) -> None:
    T = 512
    noise = np.random.default_rng(0).random((12, 12, T, T), dtype=np.float32)
    weights = noise / noise.sum(-1, keepdims=True)  # (L, H, T, T)
    tr = synth.make_trace(
        src=[str(i) for i in range(T)], tgt=["<s>"], L=12, H=12, encoder_self=weights
    )
    fig = model_view(tr, "encoder_self", selected=(11, 11))
    assert len(fig.to_json()) <= 2_000_000
    assert round(1 / fig.data[0].dx) <= 64 + 4  # at most 64 blocks a side, and the gap
    assert "40×40 blocks of 13×13 positions" in fig.layout.title.text


def test_a_broad_pattern_at_500_tokens_is_not_drawn_faint(synth: type) -> None:
    """A head that spreads its attention over the ±100 positions around each query gives a
    56-block thumbnail shares of about 0.045 along the diagonal band: a linear colour scale
    draws that at 5% of its range, next to white; the band must show."""
    T = 500
    q, k = np.indices((T, T))
    band = (np.abs(q - k) <= 100).astype(np.float32)
    weights = np.broadcast_to(band / band.sum(-1, keepdims=True), (1, 1, T, T))
    tr = synth.make_trace(src=[str(i) for i in range(T)], tgt=["<s>"], L=1, H=1,
                          encoder_self=weights.copy())  # fmt: skip
    fig = model_view(tr, "encoder_self")
    z = decode(np.asarray(fig.data[0].z))
    on_band, off_band = np.nanmedian(np.diagonal(z)), np.nanmin(z)
    assert 0.03 < on_band < 0.06
    assert darkness(fig, on_band) >= 0.2  # 0.246 with ∛share on the palette's blues; linear: 0.03
    assert darkness(fig, off_band) == pytest.approx(0.0, abs=1e-6)  # no attention: white
    assert "∛share" in fig.data[0].colorbar.title.text  # the bar says how colour maps
    bar = fig.data[0].colorbar
    assert [float(t) for t in bar.ticktext] == pytest.approx(
        list(decode(np.asarray(bar.tickvals))), abs=1e-9
    )  # the bar's labels are the shares its colours stand for


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 12), st.integers(0, 2**16))
def test_blocks_of_any_size_keep_row_sums(Q: int, K: int, side: int, seed: int) -> None:
    noise = np.random.default_rng(seed).random((1, 1, Q, K))
    w = noise / noise.sum(-1, keepdims=True)
    q_edges, k_edges = block_edges(Q, side), block_edges(K, side)
    assert len(q_edges) - 1 <= side and q_edges[0] == 0 and q_edges[-1] == Q
    share = block_share(w, np.ones((Q, K), dtype=bool), q_edges, k_edges)
    np.testing.assert_allclose(share.sum(-1), 1.0, rtol=1e-5)


def test_no_token_markup_reaches_the_figure(markup_trace: Trace) -> None:
    data = json.dumps(json.loads(model_view(markup_trace, "cross").to_json()))
    assert "<b>x" not in data and "<img" not in data
