"""The model view: every layer × head of one kind as thumbnails, one highlighted to enlarge.

All thumbnails are tiles of one heatmap: one trace however many heads there are (a figure of
144 heatmaps on 144 pairs of axes cost the browser 90–150 ms per redraw). The axes count
heads and layers: thumbnail (layer l, head h) is centred on x = h, y = l, so the head under a
click is where it landed, and one invisible point on each centre names it on hover. Cells are
square at any width (the y axis is anchored to the x axis), so a narrow screen gets smaller
thumbnails, never slivers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnlens.record.picking import KIND_TITLES, allowed_of, attention_of, check_head, check_layer
from attnlens.record.trace import Kind, Trace
from attnlens.viz.shared.palette import BLUES

# Float32 cells in all thumbnails together: keeps the figure's JSON under ~1.5 MB.
CELL_BUDGET = 250_000
MAX_SIDE = 64
GAP = 0.08  # share of a thumbnail's side left blank between thumbnails
# Colour follows the share to the power GAMMA (the colour bar says so): at 500 tokens a
# thumbnail block holds ~1/56 of a row, so a pattern is a share of a few hundredths, which a
# linear scale leaves white (on minilm, the darkest 2% of a thumbnail's cells reached a median
# 5% of the colour scale linearly, 35% with the cube root).
GAMMA = 1 / 3
LEVELS = 254  # shares are sent as bytes 1..255 (see encode)
SHARE_TICKS = (0.0, 0.01, 0.05, 0.25, 0.5, 1.0)
NOMINAL_WIDTH = 900  # px of plot area the height is made for (Explore at a 1400 px window)
MAX_PITCH = 150  # px: a thumbnail is never drawn larger than this on the nominal width
MARGIN = {"l": 50, "r": 10, "t": 120, "b": 10}


def model_view(
    trace: Trace, kind: Kind, selected: tuple[int, int] | None = None, max_side: int = MAX_SIDE
) -> go.Figure:
    """Thumbnails of all heads, layer l head h centred on (x = h, y = l); `selected` is
    outlined. Trace 0 is the tiled heatmap, trace 1 the points naming each thumbnail."""
    weights = attention_of(trace, kind)
    L, H, Q, K = weights.shape
    if selected is not None:
        check_layer(weights, selected[0])
        check_head(weights, selected[1])
    side = max(1, min(max_side, math.isqrt(CELL_BUDGET // (L * H))))
    q_edges, k_edges = block_edges(Q, side), block_edges(K, side)
    thumbs = block_share(weights, allowed_of(trace, kind), q_edges, k_edges)  # (L, H, q, k)
    tiles = Tiles(L, H, thumbs.shape[2], thumbs.shape[3])
    layout = go.Layout(
        _axes(tiles),
        title={
            "text": f"{KIND_TITLES[kind]}<br>{L} layers (rows) × {H} heads (columns)"
            + _note(Q, K, q_edges, k_edges),
            "font": {"size": 14},
        },
        shapes=[] if selected is None else [_outline(*selected, tiles)],
        plot_bgcolor="rgba(0,0,0,0)",
        margin=MARGIN,
        height=tiles.height(),
        hovermode="closest",
        hoverdistance=-1,  # the nearest centre answers: a thumbnail is its centre's cell
    )
    return go.Figure([_tiled(thumbs, tiles), _names(tiles)], layout)


class Tiles:
    """Where the thumbnails go: L rows of H tiles, each q × k cells, gap cells between."""

    def __init__(self, L: int, H: int, q: int, k: int) -> None:
        self.L, self.H, self.q, self.k = L, H, q, k
        self.gap = max(1, round(GAP * max(q, k)))

    @property
    def dx(self) -> float:
        """One cell's width in head units (a tile and its gap are 1 wide)."""
        return 1 / (self.k + self.gap)

    @property
    def dy(self) -> float:
        return 1 / (self.q + self.gap)

    def height(self) -> int:
        """Figure height in px that fits the grid on a plot area NOMINAL_WIDTH wide."""
        pitch = min(MAX_PITCH, NOMINAL_WIDTH / self.H)  # px per head
        grid = self.L * pitch * (self.q + self.gap) / (self.k + self.gap)
        return round(grid + MARGIN["t"] + MARGIN["b"])


def block_edges(n: int, side: int) -> np.ndarray:
    """Equal blocks (the last may be shorter), at most `side` of them, covering 0..n: (b + 1,)."""
    size = -(-n // side)  # ceil
    return np.append(np.arange(0, n, size), n)


def block_share(
    weights: np.ndarray, allowed: np.ndarray, q_edges: np.ndarray, k_edges: np.ndarray
) -> np.ndarray:
    """Per block: mean over its queries of the attention they give its keys; rows still sum to 1.

    Blocks with no allowed cell are NaN, so masked areas stay distinct from low weights.
    """
    summed = np.add.reduceat(weights, k_edges[:-1], axis=-1)  # (L, H, Q, k)
    summed = np.add.reduceat(summed, q_edges[:-1], axis=-2)  # (L, H, q, k)
    rows = np.diff(q_edges)[:, None]  # (q, 1)
    any_allowed = np.add.reduceat(np.add.reduceat(allowed, k_edges[:-1], 1), q_edges[:-1], 0)
    return np.where(any_allowed > 0, summed / rows, np.nan).astype(np.float32)


def tile(thumbs: np.ndarray, gap: int) -> np.ndarray:
    """(L, H, q, k) thumbnails laid out as one (L·(q+gap)−gap, H·(k+gap)−gap) grid, NaN between."""
    L, H, q, k = thumbs.shape
    padded = np.full((L, q + gap, H, k + gap), np.nan, dtype=np.float32)
    padded[:, :q, :, :k] = thumbs.transpose(0, 2, 1, 3)  # (L, q, H, k)
    return padded.reshape(L * (q + gap), H * (k + gap))[
        : L * (q + gap) - gap, : H * (k + gap) - gap
    ]


def _tiled(thumbs: np.ndarray, tiles: Tiles) -> go.Heatmap:
    return go.Heatmap(
        z=encode(tile(thumbs, tiles.gap)),
        x0=-(tiles.k - 1) / 2 * tiles.dx,
        dx=tiles.dx,
        y0=-(tiles.q - 1) / 2 * tiles.dy,
        dy=tiles.dy,
        zmin=0,
        zmax=LEVELS + 1,
        colorscale=share_colorscale(),
        colorbar=_colorbar(),
        hoverinfo="skip",  # the names below answer the hover; the enlarged heatmap has numbers
        name="share",
    )


def encode(shares: np.ndarray) -> np.ndarray:
    """Shares as one byte each, at their place on the colour scale: 1 + round(share ** GAMMA ·
    LEVELS), so that the byte's steps are even steps of colour; 0 where nothing could attend
    (a masked block, or the gap between tiles), drawn blank. A quarter of float32's bytes: the
    model view of minilm on 32 tokens was 513 KB of JSON."""
    out = np.zeros(shares.shape, dtype=np.uint8)
    known = ~np.isnan(shares)
    placed = np.clip(shares[known], 0.0, 1.0) ** GAMMA
    out[known] = 1 + np.rint(placed * LEVELS).astype(np.uint8)
    return out


def decode(z: np.ndarray) -> np.ndarray:
    """The shares encode() wrote (NaN where the cell is blank), to within half a colour step."""
    z = np.asarray(z, dtype=float)
    return np.where(z > 0, (np.clip(z - 1, 0, None) / LEVELS) ** (1 / GAMMA), np.nan)


def share_colorscale() -> list[list[Any]]:
    """The palette's blues, evenly over the encoded bytes 1..255 (so ∝ share ** GAMMA); 0 is
    transparent."""
    blank = "rgba(0,0,0,0)"
    out: list[list[Any]] = [[0.0, blank], [0.5 / (LEVELS + 1), blank]]
    for i, (r, g, b) in enumerate(BLUES):
        out.append([(1 + i / (len(BLUES) - 1) * LEVELS) / (LEVELS + 1), f"rgb({r},{g},{b})"])
    return out


def _colorbar() -> dict[str, Any]:
    """Short and across, above the grid's right end: the grid keeps the width, and the bar
    stays beside the thumbnails at any width (the grid hugs the top)."""
    return {
        "title": {"text": "share (colour ∝ ∛share)", "side": "top", "font": {"size": 11}},
        "orientation": "h",
        "x": 1.0,
        "xanchor": "right",
        "y": 1.0,
        "yanchor": "bottom",
        "ypad": 28,
        "len": 0.35,
        "thickness": 8,
        "tickvals": [1 + share**GAMMA * LEVELS for share in SHARE_TICKS],
        "ticktext": [f"{share:g}" for share in SHARE_TICKS],
        "tickfont": {"size": 10},
    }


def _names(tiles: Tiles) -> go.Scatter:
    """One invisible point on each thumbnail's centre: hovering or clicking a thumbnail
    reaches it (the nearest centre is the thumbnail's own), and its x, y are head, layer."""
    layer, head = np.divmod(np.arange(tiles.L * tiles.H), tiles.H)
    return go.Scatter(
        x=head.tolist(),
        y=layer.tolist(),
        mode="markers",
        marker={"size": 12, "opacity": 0.0},
        hovertemplate="layer %{y} · head %{x}<extra></extra>",
        showlegend=False,
        name="heads",
    )


def _axes(tiles: Tiles) -> dict[str, Any]:
    """x counts heads and y layers (layer 0 on top), each unit one tile and its gap; y is
    anchored to x so that cells stay square, and the grid hugs the top left at any width."""
    common = {"showgrid": False, "zeroline": False, "ticks": "", "tickfont": {"size": 10}}
    return {
        "xaxis": {
            **common, "side": "top", "tickvals": list(range(tiles.H)),
            "range": [-0.5, tiles.H - 0.5], "constrain": "domain", "constraintoward": "left",
        },
        "yaxis": {
            **common, "title": {"text": "layer"}, "tickvals": list(range(tiles.L)),
            "range": [tiles.L - 0.5, -0.5], "scaleanchor": "x",
            "scaleratio": (tiles.q + tiles.gap) / (tiles.k + tiles.gap),
            "constrain": "domain", "constraintoward": "top",
        },
    }  # fmt: skip


def _outline(layer: int, head: int, tiles: Tiles) -> dict[str, Any]:
    """A frame just outside thumbnail (layer, head), half a gap wide on each side."""
    half_x, half_y = (
        (tiles.k + tiles.gap / 2) / 2 * tiles.dx,
        (tiles.q + tiles.gap / 2) / 2 * tiles.dy,
    )
    box = {"x0": head - half_x, "x1": head + half_x, "y0": layer - half_y, "y1": layer + half_y}
    return {"type": "rect", "xref": "x", "yref": "y", **box,
            "line": {"color": "crimson", "width": 3}}  # fmt: skip


def _note(Q: int, K: int, q_edges: np.ndarray, k_edges: np.ndarray) -> str:
    blocks = (len(q_edges) - 1, len(k_edges) - 1)
    if blocks == (Q, K):
        return ""
    size = (int(q_edges[1] - q_edges[0]), int(k_edges[1] - k_edges[0]))
    return f"<br>in {blocks[0]}×{blocks[1]} blocks of {size[0]}×{size[1]} positions"
