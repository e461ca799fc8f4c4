"""The two panels the lecture's figures of §3.2 draw again and again: a head's weights (0..1 in
the palette's blues, printed in their cells when few) and a mask (may attend light, blocked
dark)."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from attnlens.viz.shared.palette import MASK, WEIGHTS


def weights_panel(
    w: np.ndarray,
    x: list[str],
    y: list[str],
    name: str = "weights",
    gap: int = 1,
    printed: bool = False,
    **extra: Any,
) -> go.Heatmap:
    """Weights (rows × columns, NaN where there is none) coloured 0..1, each printed to two
    decimals when `printed`; the hover names query, key and the weight (under `name` when it
    is a head's)."""
    head = f"{name}<br>" if name.startswith("head") else ""
    text = np.where(np.isnan(w), "", np.char.mod("%.2f", np.nan_to_num(w)))
    return go.Heatmap(
        z=w,
        x=x,
        y=y,
        zmin=0,
        zmax=1,
        colorscale=WEIGHTS,
        xgap=gap,
        ygap=gap,
        hoverongaps=False,
        colorbar={"title": "weight"},
        name=name,
        hovertemplate=f"{head}query %{{y}}<br>key %{{x}}<br>weight %{{z:.4f}}<extra></extra>",
        **({"text": text, "texttemplate": "%{text}"} if printed else {}),
        **extra,
    )


def mask_panel(
    m: np.ndarray,
    x: list[str],
    y: list[str],
    name: str,
    gaps: tuple[int, int],
    heading: str = "",
) -> go.Heatmap:
    """A mask, 1 where the query may attend to the key (NaN: a row not there yet); the hover
    says which, under `heading` where a figure shows several masks."""
    head = f"{heading}<br>" if heading else ""
    return go.Heatmap(
        z=m,
        x=x,
        y=y,
        zmin=0,
        zmax=1,
        colorscale=MASK,
        showscale=False,
        xgap=gaps[0],
        ygap=gaps[1],
        hoverongaps=False,
        name=name,
        # z, not per-cell text: at 512 tokens three panels of words would weigh ~8 MB
        hovertemplate=f"{head}query %{{y}}<br>key %{{x}}<br>may attend (1 yes, 0 no): %{{z}}"
        "<extra></extra>",
    )
