"""Every colour scale of attnlens' figures, and every colour that means the same thing in more
than one figure, in one place: a head's weights are the same blues on a heatmap, a thumbnail,
a canvas the browser draws and an exported file. The scales are ColorBrewer's (and Viridis),
written out stop by stop as Plotly expands their names, so a figure never depends on which
names a Plotly version knows."""

from __future__ import annotations

from typing import Any

Rgb = tuple[int, int, int]

# Sequential, light to dark, stops evenly over 0..1.
BLUES: tuple[Rgb, ...] = (  # attention weights, wherever a head is drawn
    (247, 251, 255), (222, 235, 247), (198, 219, 239), (158, 202, 225), (107, 174, 214),
    (66, 146, 198), (33, 113, 181), (8, 81, 156), (8, 48, 107),
)  # fmt: skip
GREENS: tuple[Rgb, ...] = (  # cross-attention read as an alignment: target against source
    (247, 252, 245), (229, 245, 224), (199, 233, 192), (161, 217, 155), (116, 196, 118),
    (65, 171, 93), (35, 139, 69), (0, 109, 44), (0, 68, 27),
)  # fmt: skip
PURPLES: tuple[Rgb, ...] = (  # attention carried through the layers: rollout and flow
    (252, 251, 253), (239, 237, 245), (218, 218, 235), (188, 189, 220), (158, 154, 200),
    (128, 125, 186), (106, 81, 163), (84, 39, 143), (63, 0, 125),
)  # fmt: skip
VIRIDIS: tuple[Rgb, ...] = (  # a measure that is not a weight: head statistics, similarities
    (68, 1, 84), (72, 40, 120), (62, 73, 137), (49, 104, 142), (38, 130, 142),
    (31, 158, 137), (53, 183, 121), (110, 206, 88), (181, 222, 43), (253, 231, 37),
)  # fmt: skip
# Diverging, negative red to positive blue through white at the middle.
RED_BLUE: tuple[Rgb, ...] = (  # signed numbers: vectors, scores before the softmax, encodings
    (103, 0, 31), (178, 24, 43), (214, 96, 77), (244, 165, 130), (253, 219, 199),
    (247, 247, 247), (209, 229, 240), (146, 197, 222), (67, 147, 195), (33, 102, 172),
    (5, 48, 97),
)  # fmt: skip

# Plotly's (D3's) first colours, each naming one thing across figures.
BLUE = "rgb(31,119,180)"  # what is still open or merely possible: a live beam, a candidate
ORANGE = "rgb(255,127,14)"  # what the user follows: another beam's path, a sliding window
GREEN = "rgb(44,160,44)"  # what is done or right: a finished beam, the right answer, rollout
RED = "#d62728"  # what a figure is about: the row, the chosen token, the lit block, a sink
HEAD_COLOURS = (  # a colour per head where heads share one plot (Plotly's qualitative palette)
    "#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A",
    "#19D3F3", "#FF6692", "#B6E880", "#FF97FF", "#FECB52",
)  # fmt: skip
PLOTLY_BLUE = HEAD_COLOURS[0]  # the first head's colour, a step's attention bars
MARK = "rgb(230,85,13)"  # marks drawn over blues: true sources, a pair's boundary, arrows
MASKED = "rgb(120,120,120)"  # a cell no query may attend to: never a low weight
ALLOWED, BLOCKED = "rgb(158,202,225)", "rgb(60,60,60)"  # a mask's two values
MASK = [[0.0, BLOCKED], [0.5, BLOCKED], [0.5, ALLOWED], [1.0, ALLOWED]]  # 0 blocked, 1 allowed
FADED = "#c0c0c0"  # what was dropped: a pruned beam, a token sampling leaves out
WRONG = "#b0b0b0"  # a class's wrong answers, beside the right one in GREEN
PALE_BLUE = "#9ecae1"  # the model's own distribution, beside what a strategy made of it
NEUTRAL = "rgb(90,90,90)"  # an importance measured beside the scores it is compared with

# The light and dark themes of an exported file: Plotly's template and an opaque background.
TEMPLATES = {False: "plotly_white", True: "plotly_dark"}
BACKGROUNDS = {False: "white", True: "rgb(17,17,17)"}


def plotly_scale(stops: tuple[Rgb, ...]) -> list[list[Any]]:
    """Plotly's [position, colour] list of a scale, its stops evenly over 0..1."""
    n = len(stops) - 1
    return [[i / n, f"rgb({r},{g},{b})"] for i, (r, g, b) in enumerate(stops)]


WEIGHTS = plotly_scale(BLUES)
ALIGNMENT = plotly_scale(GREENS)
FLOW = plotly_scale(PURPLES)
MEASURE = plotly_scale(VIRIDIS)
SIGNED = plotly_scale(RED_BLUE)
