"""Labels of a scatter's points kept apart: each label takes the first place around its point
where it covers no label placed before, no point and no reference line; where every place is
taken it joins the label it would cover ("1.2, 1.3"), which is then placed anew. Sizes are
shares of the panel's axis spans, from the label's characters (the experiments' charts:
translate's heads 1.2 and 1.3 printed on the 80% line, the induction model's 1.0, 1.1, 1.3
printed over each other)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

CHAR = 0.016  # a character's width, as a share of the panel's x span
HEIGHT = 0.045  # a label's height, as a share of the y span
MARKER = 0.018  # a marker's half size, both ways
PLACES = ("top center", "bottom center", "middle right", "middle left",
          "top right", "bottom right", "top left", "bottom left")  # fmt: skip


@dataclass(frozen=True)
class Box:
    """A rectangle in shares of the panel's spans: centre and half sizes."""

    x: float
    y: float
    w: float
    h: float

    def hits(self, other: Box) -> bool:
        return abs(self.x - other.x) < self.w + other.w and abs(self.y - other.y) < self.h + other.h


def _box(x: float, y: float, chars: int, place: str) -> Box:
    """Where a label of chars characters sits, placed at `place` of the point (x, y)."""
    w, h = chars * CHAR / 2, HEIGHT / 2
    vertical, horizontal = place.split()
    dy = {"top": MARKER + h, "bottom": -MARKER - h, "middle": 0.0}[vertical]
    dx = {"center": 0.0, "right": MARKER + w, "left": -MARKER - w}[horizontal]
    if vertical != "middle" and horizontal != "center":  # a corner: beside the point, above it
        dx = w if horizontal == "right" else -w
    return Box(x + dx, y + dy, w, h)


def _spread(values: ArrayLike, span: tuple[float, float] | None) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    low, high = span if span is not None else (float(np.nanmin(v)), float(np.nanmax(v)))
    return np.asarray((v - low) / ((high - low) or 1.0), dtype=float)


def placed_labels(
    xs: ArrayLike,
    ys: ArrayLike,
    names: Sequence[str],
    x_span: tuple[float, float] | None = None,
    y_span: tuple[float, float] | None = None,
    lines_y: Sequence[float] = (),
    lines_x: Sequence[float] = (),
) -> tuple[list[str], list[str]]:
    """Per point: its label ("" where it joined another's) and its Plotly textposition. Spans
    are the axes' ranges (default: the points' own); lines are reference lines to keep clear."""
    if not len(names):
        return [], []
    x, y = _spread(xs, x_span), _spread(ys, y_span)
    line_boxes = [Box(0.5, float(_spread([v], y_span)[0]), 0.5, 0.002) for v in lines_y]
    line_boxes += [Box(float(_spread([v], x_span)[0]), 0.5, 0.002, 0.5) for v in lines_x]
    points = [Box(float(a), float(b), MARKER, MARKER) for a, b in zip(x, y, strict=True)]
    held: dict[int, list[int]] = {}  # a placed label's point → the points it names
    boxes: dict[int, Box] = {}
    places = ["top center"] * len(names)
    order = sorted(range(len(names)), key=lambda i: (-y[i], x[i]))  # from the top down
    together = _coinciding(x, y, order)
    for i in order:
        if i not in together:  # drawn as one marker with a point placed before
            continue
        group = list(together[i])
        while True:
            text = ", ".join(names[m] for m in sorted(group))
            others = [p for k, p in enumerate(points) if k not in group]
            found = _free_place(x[i], y[i], len(text), [*boxes.values(), *others, *line_boxes])
            if found is not None or not boxes:
                break
            hit = min(boxes, key=lambda k: (boxes[k].x - x[i]) ** 2 + (boxes[k].y - y[i]) ** 2)
            group += held.pop(hit)  # nowhere free: the nearest label joins this one
            del boxes[hit]
        place, box = (
            found
            if found is not None
            else ("top center", _box(x[i], y[i], len(text), "top center"))
        )
        held[i], boxes[i], places[i] = group, box, place
    texts, shown = [""] * len(names), ["top center"] * len(names)
    for i, group in held.items():  # on the first of the points drawn as one marker with i
        at = min(m for m in group if _same(x, y, m, i))
        texts[at], shown[at] = ", ".join(names[m] for m in sorted(group)), places[i]
    return texts, shown


def _same(x: np.ndarray, y: np.ndarray, a: int, b: int) -> bool:
    return bool(abs(x[a] - x[b]) < MARKER and abs(y[a] - y[b]) < MARKER)


def _coinciding(x: np.ndarray, y: np.ndarray, order: Sequence[int]) -> dict[int, list[int]]:
    """Points drawn as one marker (nearer than a marker's half size both ways), by the first
    of each in order: they share one label."""
    groups: dict[int, list[int]] = {}
    for i in order:
        first = next(
            (g for g in groups if abs(x[g] - x[i]) < MARKER and abs(y[g] - y[i]) < MARKER), None
        )
        if first is None:
            groups[i] = [i]
        else:
            groups[first].append(i)
    return groups


def _free_place(x: float, y: float, chars: int, taken: list[Box]) -> tuple[str, Box] | None:
    """The first place around (x, y) where a label of chars characters covers nothing taken."""
    for place in PLACES:
        box = _box(x, y, chars, place)
        if not any(box.hits(other) for other in taken):
            return place, box
    return None
