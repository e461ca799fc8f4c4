"""The colour rule of a head's weights, the same on every heatmap of one head (Explore's and the
thumbnails'): perceptual by default, colour ∝ ∛weight, so a long input's head does not read
blank (at 364 tokens minilm's weights are mostly a few hundredths, which a linear 0–1 scale
leaves white); linear on request. The colour bar says which."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from attnlens.viz.shared.palette import BLUES, WEIGHTS

Scale = Literal["perceptual", "linear"]
SCALES: tuple[Scale, ...] = ("perceptual", "linear")
POWER = {"perceptual": 3, "linear": 1}  # colour ∝ weight^(1 / POWER)
TICKS = {
    "perceptual": (0.0, 0.001, 0.01, 0.05, 0.2, 0.5, 1.0),
    "linear": (0.0, 0.25, 0.5, 0.75, 1.0),
}
BAR_TITLES = {"perceptual": "weight (colour ∝ ∛weight)", "linear": "weight (linear colour)"}
HOVER_DIGITS = 4  # a weight in a hover box: 0.0123, never 6.513426e-14


def check_scale(scale: object) -> Scale:
    """The scale, or a ValueError naming the value and the ones there are."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
    return scale  # type: ignore[return-value]


def colour_position(weights: np.ndarray, scale: Scale) -> np.ndarray:
    """Where each weight sits on the colour bar, 0..1 (NaN stays NaN)."""
    w = np.clip(np.asarray(weights, dtype=np.float32), 0.0, 1.0)
    return w if scale == "linear" else np.cbrt(w)


def colorscale() -> list[list[Any]]:
    """Plotly's [position, colour] stops of the blues every head is drawn in (the palette's)."""
    return [list(stop) for stop in WEIGHTS]


def colorbar(scale: Scale) -> dict[str, Any]:
    """A colour bar whose ticks read as weights wherever they sit, titled with the rule."""
    ticks = TICKS[scale]
    return {
        "title": {"text": BAR_TITLES[scale]},
        "tickvals": [float(v) for v in colour_position(np.array(ticks), scale)],
        "ticktext": [f"{t:g}" for t in ticks],
    }


def legend(scale: Scale) -> dict[str, Any]:
    """The browser's colour rule: the palette's blues over 0..1, weight^(1/power), the bar's
    ticks at their positions, the bar's title."""
    check_scale(scale)
    n = len(BLUES) - 1
    ticks = TICKS[scale]
    return {
        "scale": scale,
        "power": POWER[scale],
        "colors": [[i / n, *map(float, rgb)] for i, rgb in enumerate(BLUES)],
        "ticks": [
            [float(p), f"{t:g}"]
            for p, t in zip(colour_position(np.array(ticks), scale), ticks, strict=True)
        ],
        "bar_title": BAR_TITLES[scale],
        "digits": HOVER_DIGITS,
    }


def measure_title(scale: Scale, unit: float) -> str:
    """The colour bar's title of αᵢⱼ ‖f(xⱼ)‖ drawn as a share of `unit`, its largest."""
    rule = "colour ∝ ∛share" if check_scale(scale) == "perceptual" else "linear colour"
    return f"norm α‖f(x)‖ ÷ {unit:.3g} ({rule})"


def measure_legend(scale: Scale, unit: float) -> dict[str, Any]:
    """legend() of the norm measure: the same colours and ticks over 0..1 of `unit`, the bar
    titled with the measure and that largest."""
    return {**legend(scale), "bar_title": measure_title(scale, unit)}
