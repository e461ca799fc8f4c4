"""Figure 1 of the paper as a diagram of this model's stacks (§3.1), each attention in its place."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from attnlens.record.trace import Kind, ModelInfo
from attnlens.viz.shared.labels import escape, visible, wrapped
from attnlens.viz.shared.palette import RED

COLOURS = {  # the paper's Figure 1 palette
    "embedding": "#f6c7c0",
    "attention": "#fbd7a0",
    "norm": "#eeeeb8",
    "ffn": "#bfe0f5",
    "linear": "#ddd3ee",
    "softmax": "#c5e8bb",
    "frame": "#8a8a8a",
}
HIGHLIGHT = RED
BLOCK_CHARS = 20  # a block's words wrap past this, so they stay inside it on a narrow figure
# An attention block's bold words wrap past this, as the paper's Figure 1 writes them
# ("Masked / Multi-Head / Attention"): in the Lecture's column at 1400 px a block is ~180 px,
# and "Multi-Head Attention" in bold projector text 222 px
ATTENTION_CHARS = 10
# The attentions' names beside the stacks wrap past this, also after a hyphen or dash: at
# 1400 px there are ~130 px beside a stack, where "self-attention" takes 135 px
NAME_CHARS = 9
# What goes in under a stack is cut past this: the stacks stand ~250 px apart in the Lecture's
# column at 1400 px, where a longer input ran under the other stack's (20 keeps the example whole)
IO_CHARS = 20
# Heights in the diagram's units: on a projector (24 px text, a 760 px figure) a unit is ~29 px,
# so a block is 1 unit per line of its words
LINE_UNITS = 1.0
ROW_HEIGHT = {"attention": 2.0, "norm": 1.0, "ffn": 1.0}
ROW_GAP = 0.45
FRAME_TOP = 1.3  # room above a stack's last block for "N = … ×", clear of that block's words
STACK_Y = 4.7  # where a stack's first block starts: the frame at 4.3, the encoding under it
INK = "#222222"
GREY = "#777777"
ATTENTION_NAMES: dict[str, str] = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "masked decoder self-attention",
    "cross": "encoder–decoder attention",
}


@dataclass(frozen=True)
class Box:
    """One block of the diagram: its role, the words in it and where it sits."""

    role: str  # a COLOURS key
    label: str
    x0: float
    x1: float
    y0: float
    y1: float
    kind: Kind | None = None  # the attention it computes, if it is one

    @property
    def centre(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2


def _stack(x0: float, x1: float, decoder: bool, with_cross: bool) -> list[Box]:
    """One layer of a stack, bottom to top, as in Figure 1."""
    rows: list[tuple[str, str, Kind | None]] = []
    if decoder:
        rows.append(("attention", "Masked Multi-Head Attention", "decoder_self"))
        rows.append(("norm", "Add & Norm", None))
        if with_cross:
            rows.append(("attention", "Multi-Head Attention", "cross"))
            rows.append(("norm", "Add & Norm", None))
    else:
        rows.append(("attention", "Multi-Head Attention", "encoder_self"))
        rows.append(("norm", "Add & Norm", None))
    rows += [("ffn", "Feed Forward", None), ("norm", "Add & Norm", None)]
    boxes, y = [], STACK_Y
    for role, label, kind in rows:
        lines = _block_words(label, kind).count("<br>") + 1
        height = max(ROW_HEIGHT[role], LINE_UNITS * lines)
        boxes.append(Box(role, label, x0, x1, y, y + height, kind))
        y += height + ROW_GAP
    return boxes


def _column(x0: float, x1: float, decoder: bool, with_cross: bool, n: int) -> list[Box]:
    """Embedding, the N× frame of layers, and (for the decoder) the output head."""
    name = "Output Embedding (shifted right)" if decoder else "Input Embedding"
    boxes = [Box("embedding", name, x0, x1, 0.9, 2.9)]
    layer = _stack(x0 + 0.35, x1 - 0.35, decoder, with_cross)
    top = layer[-1].y1 + FRAME_TOP
    boxes.append(Box("frame", f"N = {n} ×", x0, x1, STACK_Y - 0.4, top))
    boxes += layer
    if decoder:
        boxes.append(Box("linear", "Linear", x0 + 0.35, x1 - 0.35, top + 0.8, top + 1.8))
        boxes.append(Box("softmax", "Softmax", x0 + 0.35, x1 - 0.35, top + 2.3, top + 3.3))
    return boxes


def diagram_boxes(info: ModelInfo) -> list[Box]:
    """Every block of the model's Figure 1: the stacks it has, with its own N."""
    has_encoder = "encoder_self" in info.kinds
    has_decoder = "decoder_self" in info.kinds
    boxes: list[Box] = []
    if has_encoder:  # columns as wide as the names beside them allow: words fit in blocks
        boxes += _column(0.3, 5.7, False, False, info.n_layers)
    if has_decoder:
        n_dec = info.shape("decoder_self")[0]
        boxes += _column(6.3, 11.7, True, has_encoder, n_dec)
    return boxes


class Drawing:
    """Shapes and annotations gathered as plain dicts and handed to Plotly once (forty
    add_annotation calls validate forty times: 0.3 s for one diagram)."""

    def __init__(self) -> None:
        self.shapes: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []

    def rect(self, box: Box, line: dict[str, Any], fill: str) -> None:
        self.shapes.append(
            {
                "type": "rect",
                "x0": box.x0,
                "x1": box.x1,
                "y0": box.y0,
                "y1": box.y1,
                "line": line,
                "fillcolor": fill,
            }
        )

    def text(self, x: float, y: float, words: str, size: int = 14, **more: Any) -> None:
        self.notes.append(
            {
                "x": x,
                "y": y,
                "text": words,
                "showarrow": False,
                "font": {"size": size, **more.pop("font", {})},
                **more,
            }
        )

    def arrow(self, start: tuple[float, float], end: tuple[float, float], **more: Any) -> None:
        self.notes.append(
            {
                "x": end[0],
                "y": end[1],
                "ax": start[0],
                "ay": start[1],
                "axref": "x",
                "ayref": "y",
                "xref": "x",
                "yref": "y",
                "text": "",
                "showarrow": True,
                "arrowhead": 2,
                "arrowsize": 1.2,
                "arrowwidth": 1.5,
                "arrowcolor": GREY,
                **more,
            }
        )


def architecture_diagram(
    info: ModelInfo,
    source: str = "",
    target: str = "",
    highlight: Kind | None = None,
) -> go.Figure:
    """The Transformer's two stacks (Figure 1) drawn for this model: its N, h and d_model, its
    input and output text at the bottom, and each of the three attentions named where it sits;
    `highlight` outlines one of them in red. A decoder-only or encoder-only model shows only
    the stack it has."""
    boxes = diagram_boxes(info)
    drawing = Drawing()
    for box in boxes:
        _draw(drawing, box, box.kind is not None and box.kind == highlight)
    _arrows(drawing, boxes)
    _io_labels(drawing, boxes, source, target)
    _missing_stack(drawing, info)
    heads = info.shape(info.self_kind)[1]
    top = max(box.y1 for box in boxes) + 1.3  # the words above the highest block
    return go.Figure(
        layout={
            "title": {  # two lines: one would run past a projected figure's width
                "text": f"{escape(info.name)}: N = {info.n_layers} layers, h = {heads} heads, "
                f"d_model = {info.d_model}",
                "subtitle": {"text": "the paper's base model: N = 6, h = 8, d_model = 512"},
                "y": 0.98,
                "yanchor": "top",
            },
            "shapes": drawing.shapes,
            "annotations": drawing.notes,
            "xaxis": {"visible": False, "range": [-3.4, 15.4], "fixedrange": True},
            "yaxis": {"visible": False, "range": [-0.4, max(top, 17.2)], "fixedrange": True},
            "plot_bgcolor": "rgba(0,0,0,0)",
            "showlegend": False,
            "margin": {"l": 10, "r": 10, "t": 80, "b": 10},
            "height": 720,
        }
    )


def _draw(drawing: Drawing, box: Box, lit: bool) -> None:
    """A block with its words; the frame of N layers is an outline with "N = … ×" inside."""
    if box.role == "frame":
        drawing.rect(box, {"color": COLOURS["frame"], "width": 2}, "rgba(0,0,0,0)")
        drawing.text(
            box.x0 + 0.1,
            box.y1 - 0.05,
            box.label,
            13,
            xanchor="left",
            yanchor="top",
            font={"color": GREY},
        )
        return
    line = {"color": HIGHLIGHT, "width": 5} if lit else {"color": "#555555", "width": 1}
    drawing.rect(box, line, COLOURS[box.role])
    x, y = box.centre
    drawing.text(x, y, _block_words(box.label, box.kind), 14, font={"color": INK})
    if box.kind is not None:
        _name_attention(drawing, box, lit)


def _name_attention(drawing: Drawing, box: Box, lit: bool) -> None:
    """The attention's name in our words, outside the block, pointing at it."""
    left = box.x0 < 6
    colour = HIGHLIGHT if lit else GREY
    start = (-0.3 if left else 12.3, box.centre[1] + (0.9 if box.kind == "cross" else 0.0))
    drawing.arrow(
        start,
        (box.x0 if left else box.x1, box.centre[1]),
        arrowcolor=colour,
        text=_name_lines(ATTENTION_NAMES[box.kind or ""]),
        font={"color": colour, "size": 13},
        xanchor="right" if left else "left",
    )


def _arrows(drawing: Drawing, boxes: list[Box]) -> None:
    """Bottom-to-top flow in each column, and the encoder's memory into cross-attention."""
    for left in (True, False):
        column = [b for b in boxes if (b.x0 < 6) == left and b.role != "frame"]
        for below, above in itertools.pairwise(column):
            x = below.centre[0]
            drawing.arrow((x, below.y1), (x, above.y0))
    cross = next((b for b in boxes if b.kind == "cross"), None)
    frame = next((b for b in boxes if b.role == "frame" and b.x0 < 6), None)
    if cross is None or frame is None:
        return
    x_enc, y_top, y_cross = frame.centre[0], frame.y1, cross.centre[1]
    path = f"M {x_enc} {y_top} L {x_enc} {y_top + 0.7} L 6.1 {y_top + 0.7} L 6.1 {y_cross}"
    drawing.shapes.append({"type": "path", "path": path, "line": {"color": GREY, "width": 1.5}})
    drawing.arrow((6.1, y_cross), (cross.x0, y_cross))
    # over the encoder's column: between the columns it ran over the decoder's frame at 1400 px
    drawing.text(x_enc + 0.6, y_top + 1.05, "memory: K and V", 13, font={"color": GREY})


def _io_labels(drawing: Drawing, boxes: list[Box], source: str, target: str) -> None:
    """What goes in at the bottom of each stack, and what comes out at the top."""
    for box in boxes:
        x = box.centre[0]
        if box.role == "embedding":
            decoder = box.x0 > 6
            text = target if decoder else source
            said = _short(text, IO_CHARS) or ("Outputs" if decoder else "Inputs")
            drawing.text(x, 0.2, said)
            drawing.arrow((x, 0.65), (x, box.y0))
            # ⊕ on the arrow, its words on the stack's outer side beside the embedding, as
            # the paper has them: side by side, centred, the two ran into each other in the
            # Lecture's column at 1400 px
            drawing.text(x, 3.6, "⊕", 13)
            side = {"xanchor": "left"} if decoder else {"xanchor": "right"}
            at = box.x1 + 0.25 if decoder else box.x0 - 0.25
            drawing.text(at, box.centre[1], "positional<br>encoding", 13, **side)
        if box.role == "softmax":
            drawing.text(x, box.y1 + 0.7, "output probabilities")


def _missing_stack(drawing: Drawing, info: ModelInfo) -> None:
    """Where a stack is absent, say so in its place, so the empty half reads as a fact."""
    words = None
    if "encoder_self" not in info.kinds:
        words = (3.0, "decoder-only: no encoder,<br>so no encoder–decoder attention")
    elif "decoder_self" not in info.kinds:
        words = (9.0, "encoder-only: no decoder,<br>nothing is generated")
    if words is not None:
        drawing.text(words[0], 8.0, words[1], 16, font={"color": GREY})


def _block_words(label: str, kind: Kind | None) -> str:
    """A block's words in lines that fit it; an attention's in bold."""
    if kind is None:
        return wrapped(label, BLOCK_CHARS)
    return f"<b>{wrapped(label, ATTENTION_CHARS)}</b>"


def _name_lines(name: str, width: int = NAME_CHARS) -> str:
    """An attention's name in lines of at most `width` characters where they can be, broken at
    spaces and after a hyphen or dash ("self-" / "attention")."""
    lines: list[str] = []
    for word in name.split(" "):
        for i, piece in enumerate(p for p in re.split(r"(?<=[-–])", word) if p):
            joined = (lines[-1] + ("" if i else " ") + piece) if lines else piece
            if lines and len(joined) <= width:
                lines[-1] = joined
            else:
                lines.append(piece)
    return "<br>".join(lines)


def _short(text: str, limit: int = 40) -> str:
    """Text for a label: visible, escaped, cut with an ellipsis past `limit` characters."""
    shown = visible(text)
    return escape(shown if len(shown) <= limit else shown[: limit - 1] + "…")
