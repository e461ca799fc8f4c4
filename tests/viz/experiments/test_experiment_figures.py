"""The experiments' figures, checked by their data: arrows where an induction head should look,
one point per head, a curve per kind of attention, the scales of the erasure view."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnlens.analysis.agreement import case_correlations, correlation_table
from attnlens.record.erasure import ErasureCase
from attnlens.record.experiment import ExperimentResult
from attnlens.record.picking import earlier_matches
from attnlens.viz.experiments.alignment_view import alignment_chart
from attnlens.viz.experiments.explanation_view import explanation_view
from attnlens.viz.experiments.importance_view import importance_chart, pruning_curve
from attnlens.viz.experiments.induction_view import induction_heads_view, induction_scores_chart
from helpers.synth import MakeTrace


def heads(kind: str, L: int, H: int, **scores: list[float]) -> pd.DataFrame:
    frame = pd.DataFrame({"kind": kind, "layer": np.repeat(np.arange(L), H),
                          "head": np.tile(np.arange(H), L)})  # fmt: skip
    for name, values in scores.items():
        frame[name] = values
    return frame


def test_earlier_matches_point_at_the_latest_earlier_occurrence() -> None:
    assert earlier_matches(list("abcab")) == [(3, 0), (4, 1)]
    assert earlier_matches(list("aa")) == []  # j + 1 = q: nothing to look back to
    assert earlier_matches(list("ababa")) == [(2, 0), (3, 1), (4, 2)]


def test_the_two_heads_view_draws_both_heads_and_an_arrow_per_match(synth: object) -> None:
    make: MakeTrace = synth.make_trace  # type: ignore[attr-defined]
    tokens = ("<s>", "k", "3", "x", "k", "3", "x")
    tr = make(src=(), tgt=tokens, L=2, H=2)
    fig = induction_heads_view(tr, (0, 1), (1, 0))
    held = [np.asarray(t.customdata) for t in fig.data[:2]]  # the weights, for the hover
    assert np.allclose(held[0], tr.decoder_self[0, 1])  # type: ignore[index]
    assert np.allclose(held[1], tr.decoder_self[1, 0])  # type: ignore[index]
    # coloured by ∛weight, as every head's heatmap, its colour bar saying so: on a linear
    # scale a 1,024-token input's panels read blank (weights of a few thousandths)
    assert np.allclose(np.asarray(fig.data[1].z), np.cbrt(held[1]), atol=1e-6)
    assert "∛" in fig.data[1].colorbar.title.text
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert [(a.y, a.ax, a.x) for a in arrows] == [
        ("4 · k", "1 · k", "2 · 3"),
        ("5 · 3", "2 · 3", "3 · x"),
        ("6 · x", "3 · x", "4 · k"),
    ]  # in each row: from the earlier match of the query's token to the token after it
    assert fig.layout.yaxis2.matches == "y" and fig.layout.yaxis2.showticklabels is False
    # one set of row labels, on the left: none is drawn between the two panels
    with pytest.raises(ValueError, match="layer 5"):
        induction_heads_view(tr, (5, 0), (1, 0))


def test_the_scores_chart_has_a_point_per_head_by_layer() -> None:
    r = ExperimentResult(
        "induction", "m", {}, heads("decoder_self", 2, 2, induction=[0, 0, 0.95, 0.1],
                                    previous_token=[0.97, 0.2, 0, 0]),
        {"sequences": 10, "block": 5, "copy_loss_ratio": 0.1},
    )  # fmt: skip
    fig = induction_scores_chart(r)
    assert [t.name for t in fig.data] == ["layer 0", "layer 1"]
    assert list(fig.data[1].y) == [0.95, 0.1] and list(fig.data[0].x) == [0.97, 0.2]
    assert list(fig.data[0].text) == ["0.0", ""] and list(fig.data[1].customdata) == ["1.0", "1.1"]
    assert "10% of the first" in fig.layout.title.text


def test_pruning_curves_for_all_heads_and_each_kind() -> None:
    curve = pd.DataFrame({"heads_removed": [0, 1, 2], "fraction_pruned": [0, 0.5, 1],
                          "removed": ["", "cross:0.0", "encoder:0.0"],
                          "exact_greedy": [1.0, 0.5, 0.0], "exact_beam": [1.0, 0.6, 0.0],
                          "loglik": [-0.1, -1, -3]})  # fmt: skip
    by_kind = pd.DataFrame({"kind": ["cross", "encoder_self"], "heads_removed": [1, 1],
                            "fraction_pruned": [1.0, 1.0], "exact_greedy": [0.2, 0.9],
                            "loglik": [-2, -0.5]})  # fmt: skip
    r = ExperimentResult("importance", "m", {"n": 5}, heads("cross", 1, 1), {},
                         {"pruning": curve, "pruning_by_kind": by_kind})  # fmt: skip
    fig = pruning_curve(r)
    names = [t.name for t in fig.data]
    assert names == ["greedy", "beam (4)", "cross-attention", "encoder self-attention"]
    assert list(fig.data[2].y) == [1.0, 0.2]  # each kind's curve starts from the whole model
    no_curve = ExperimentResult("importance", "m", {}, heads("cross", 1, 1), notes=("why",))
    with pytest.raises(ValueError, match="no pruning curve"):
        pruning_curve(no_curve)
    bars = importance_chart(
        ExperimentResult(
            "importance",
            "m",
            {},
            heads("cross", 1, 2, importance=[0.1, 0.0], confidence=[0.9, 0.5]),
        )
    )
    assert list(bars.data[0].y) == [0.1, 0.0] and list(bars.data[0].x) == ["cross 0.0", "cross 0.1"]


def test_alignment_chart_plots_accuracy_by_layer_and_against_importance() -> None:
    r = ExperimentResult("alignment", "m", {"n": 4}, heads("cross", 2, 1, aligned=[0.2, 0.9],
                                                           importance=[0.01, 0.3]),
                         {"spearman_alignment_importance": 1.0})  # fmt: skip
    fig = alignment_chart(r)
    assert list(fig.data[0].x) == [0, 1] and list(fig.data[0].y) == [0.2, 0.9]
    assert list(fig.data[1].x) == [0.2, 0.9] and list(fig.data[1].y) == [0.01, 0.3]
    assert "ρ = 1.00" in fig.layout.annotations[1].text


def test_heads_at_one_place_share_one_label() -> None:
    """reverse's four layer-1 heads at 100% printed their names over one another."""
    r = ExperimentResult("alignment", "m", {"n": 4}, heads("cross", 2, 3,
                         aligned=[0.2, 0.5, 0.7, 1.0, 1.0, 1.0],
                         importance=[0.2, 0.0, 0.0, 0.0, 0.001, 0.0]), {})  # fmt: skip
    fig = alignment_chart(r)
    assert list(fig.data[0].text) == ["0.0", "0.1", "0.2", "1.0, 1.1, 1.2", "", ""]
    assert list(fig.data[1].text) == ["0.0", "0.1", "0.2", "1.0, 1.1, 1.2", "", ""]
    assert list(fig.data[0].customdata) == ["0.0", "0.1", "0.2", "1.0", "1.1", "1.2"]  # hover


def label_boxes(trace: object, x_span: tuple[float, float], y_span: tuple[float, float]) -> list:
    """Each non-empty label of a scatter as (text, x0, x1, y0, y1) in shares of the axes' spans:
    about 0.016 of the x span per character and 0.045 of the y span high, beside its marker
    (half size 0.018) as its textposition says."""
    boxes = []
    places = trace.textposition  # type: ignore[attr-defined]
    for text, x, y, place in zip(trace.text, trace.x, trace.y, places, strict=True):  # type: ignore[attr-defined]
        if not text:
            continue
        px = (x - x_span[0]) / (x_span[1] - x_span[0])
        py = (y - y_span[0]) / (y_span[1] - y_span[0])
        w, h, m = 0.016 * len(text), 0.045, 0.018
        vertical, horizontal = place.split()
        y0 = {"top": py + m, "bottom": py - m - h, "middle": py - h / 2}[vertical]
        if vertical == "middle":
            x0 = px + m if horizontal == "right" else px - m - w
        else:
            x0 = {"center": px - w / 2, "right": px, "left": px - w}[horizontal]
        boxes.append((text, x0, x0 + w, y0, y0 + h))
    return boxes


def overlapping(boxes: list) -> list[tuple[str, str]]:
    return [
        (a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1 :]
        if a[1] < b[2] - 1e-9 and b[1] < a[2] - 1e-9 and a[3] < b[4] - 1e-9 and b[3] < a[4] - 1e-9
    ]  # fmt: skip


def test_labels_are_kept_apart_and_off_the_80_percent_line() -> None:
    """translate's cross heads (alignment experiment, 100 examples): 1.2 and 1.3, 3 points apart
    on alignment, were printed "1.2, 1.3" across the dashed 80% line, as 0.0 and 0.2 crowded."""
    aligned = [0.04, 0.2417, 0.0717, 0.3883, 0.9133, 0.5233, 0.8083, 0.8417]
    importance = [-0.0001, -0.0007, 0.0, 0.0, 0.0023, 0.0497, 0.0142, 0.0005]
    r = ExperimentResult("alignment", "m", {"n": 100}, heads("cross", 2, 4, aligned=aligned,
                         importance=importance), {})  # fmt: skip
    fig = alignment_chart(r)
    left = label_boxes(fig.data[0], (-0.4, 1.7), (0, 1.05))
    right = label_boxes(fig.data[1], (-0.08, 1.22), (min(importance), max(importance)))
    for boxes in (left, right):
        assert overlapping(boxes) == []
        named = sorted(n for b in boxes for n in b[0].split(", "))
        assert named == sorted(f"{layer}.{h}" for layer in range(2) for h in range(4))  # each once
    line = 0.8 / 1.05
    assert not [b[0] for b in left if b[3] < line < b[4]]  # no label across the dashed line


def test_the_induction_models_sharp_heads_are_labelled_apart() -> None:
    """The induction model's heads 1.0, 1.1 and 1.3 (induction 0.93, 0.90, 0.81 at small
    previous-token scores) were printed over one another on the Heads page."""
    r = ExperimentResult(
        "induction", "m", {}, heads("decoder_self", 2, 4,
                                    induction=[0.01, 0.02, 0.0, 0.03, 0.929, 0.899, 0.05, 0.81],
                                    previous_token=[0.1, 0.2, 0.995, 0.25, 0.04, 0.05, 0.1, 0.06]),
        {"sequences": 10, "block": 5},
    )  # fmt: skip
    fig = induction_scores_chart(r)
    boxes = [b for t in fig.data for b in label_boxes(t, (-0.02, 1.05), (-0.02, 1.08))]
    assert overlapping(boxes) == []
    named = sorted(n for b in boxes for n in b[0].split(", "))
    assert named == ["0.2", "1.0", "1.1", "1.3"]
    target = (0.9 + 0.02) / 1.1
    assert not [b[0] for b in boxes if b[3] < target < b[4]]  # the 0.9 line left clear


def test_the_erasure_view_scales_each_method_and_leaves_markers_out() -> None:
    att = np.tril(np.ones((4, 4)))
    att = (att / att.sum(-1, keepdims=True))[None, None]
    att[0, 0, 3] = [0.1, 0.2, 0.3, 0.4]
    case = ErasureCase(("<s>", "a", "<b>", "c"), "d", 3, -0.5,
                       np.array([np.nan, 1.0, 4.0, 2.0]), None, att, None)  # fmt: skip
    table = correlation_table([case_correlations(case)], case_correlations(case))
    fig = explanation_view(case, table)
    bars = fig.data[0]
    assert list(bars.x) == ["1 · a", "2 · &lt;b&gt;", "3 · c"]  # token text escaped, <s> left out
    assert list(bars.y) == pytest.approx([0.25, 1.0, 0.5])
    raw = next(t for t in fig.data if t.name == "raw attention")
    assert list(raw.y) == pytest.approx([0.5, 0.75, 1.0])
    with pytest.raises(ValueError, match="layer 3"):
        explanation_view(case, table, layer=3)
