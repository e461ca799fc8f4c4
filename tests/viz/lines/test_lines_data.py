"""The lines view's payload for the browser's canvas: the same lines as lines_view, strongest
first, as packed arrays; tokens as plain text; the same bounded layout."""

from __future__ import annotations

import base64
import json
from dataclasses import replace

import numpy as np
import pytest

from attnlens.record.trace import Trace
from attnlens.viz import lines_view
from attnlens.viz.lines.lines import LINE_BUDGET, MAX_HEIGHT
from attnlens.viz.lines.lines_data import lines_data


def unpacked(data: dict[str, object]) -> list[tuple[int, int, float]]:
    """(query, key, weight) of every line, read back from the payload's base64 arrays."""

    def arr(name: str, dtype: str) -> np.ndarray:
        return np.frombuffer(base64.b64decode(str(data[name])), dtype=dtype)

    q, k, w = arr("query", "<u2"), arr("key", "<u2"), arr("weight", "<f4")
    assert q.size == k.size == w.size == data["count"]
    return [(int(a), int(b), float(c)) for a, b, c in zip(q, k, w, strict=True)]


def test_known_lines_strongest_first(synth: type) -> None:
    """Rows [0.9, 0.1, 0], [0.3, 0.7, 0], [0.01, 0.49, 0.5]: with min_weight 0.02 every weight
    but 0 and 0.01 gets a line, the heaviest first."""
    w = np.array([[0.9, 0.1, 0.0], [0.3, 0.7, 0.0], [0.01, 0.49, 0.5]], dtype=np.float32)
    tr = synth.make_trace(src=("a", "b", "c"), L=1, H=1, encoder_self=w[None, None])
    data = json.loads(json.dumps(lines_data(tr, "encoder_self", 0, 0).data()))
    got = unpacked(data)
    assert [(q, k) for q, k, _ in got] == [(0, 0), (1, 1), (2, 2), (2, 1), (1, 0), (0, 1)]
    np.testing.assert_allclose([w for *_, w in got], [0.9, 0.7, 0.5, 0.49, 0.3, 0.1])
    assert data["title"] == "encoder self-attention\nlayer 0 · head 0"
    assert data["colour"] == "#636EFA"  # head 0's colour in the Plotly lines view


def test_the_same_lines_as_the_plotly_view(trace: Trace) -> None:
    for kind, layer, head in (("encoder_self", 1, 2), ("cross", 0, 1), ("decoder_self", 1, 0)):
        fig = lines_view(trace, kind, layer, heads=[head])  # type: ignore[arg-type]
        plotly_pairs = {
            (int(a), int(b))
            for t in fig.data
            if t.mode == "lines" and t.customdata is not None
            for a, b in np.asarray(t.customdata)[::3]
        }
        data = lines_data(trace, kind, layer, head).data()  # type: ignore[arg-type]
        assert {(q, k) for q, k, _ in unpacked(data)} == plotly_pairs


def test_a_long_input_keeps_the_budget_and_a_bounded_height(synth: type) -> None:
    """300 positions, every weight 1/300 ≥ 0.002: 90,000 candidate lines, LINE_BUDGET drawn,
    and the title says so; the layout is lines_view's (bounded, every k-th label)."""
    T = 300
    w = np.full((1, 1, T, T), 1 / T, dtype=np.float32)
    w[0, 0, np.arange(T), np.arange(T)] += 0.5  # a diagonal stands out
    w /= w.sum(-1, keepdims=True)
    tr = synth.make_trace(src=[str(i) for i in range(T)], L=1, H=1, encoder_self=w)
    lines = lines_data(tr, "encoder_self", 0, 0, min_weight=0.001)
    assert lines.query.size == LINE_BUDGET and lines.title.endswith(
        f" · the strongest {LINE_BUDGET} of {T * T} lines"
    )
    assert {(int(q), int(k)) for q, k in zip(lines.query[:T], lines.key[:T], strict=True)} == {
        (i, i) for i in range(T)
    }  # the diagonal comes first
    assert lines.height == MAX_HEIGHT and lines.every > 1
    assert len(json.dumps(lines.data())) < 60_000  # 3,000 lines and 600 tokens


def test_tokens_are_plain_text_with_raw_forms_where_they_differ(
    markup_trace: Trace, synth: type
) -> None:
    data = lines_data(markup_trace, "cross", 0, 0).data()
    assert data["keys"] == [*synth.markup, "</s>"]  # literal: the browser sets them as text
    assert data["queries_raw"] == [None] * 4
    shown = synth.make_trace(src=("##ing", " ", "</s>"))
    words = ("ing", " ", "</s>")
    data = lines_data(replace(shown, src_shown=words), "encoder_self", 0, 0).data()
    assert data["keys"] == ["ing", "␣", "</s>"] and data["keys_raw"] == ["##ing", None, None]


def test_a_bad_head_is_named(trace: Trace) -> None:
    with pytest.raises(ValueError, match="head 7"):
        lines_data(trace, "cross", 0, 7)


@pytest.mark.parametrize("long_tokens", [False, True])
def test_the_figure_bound_holds_for_the_figure_as_exported(synth: type, long_tokens: bool) -> None:
    """The bound a download is offered by, before its figure is built: never below the JSON of
    lines_view's figure, projector-sized and in the dark theme's template included."""
    from attnlens.viz.shared.style import exported, projector

    T = 120
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(T) * 0.05, size=(1, 1, T)).astype(np.float32)
    src = [("\u00e9\u0000" * 40 if long_tokens else "t") + str(i) for i in range(T)]
    tr = synth.make_trace(src=src, L=1, H=1, encoder_self=w)
    bound = lines_data(tr, "encoder_self", 0, 0, text_px=24).figure_bound()
    fig = exported(projector(lines_view(tr, "encoder_self", 0, [0], text_px=24)), dark=True)
    actual = len(fig.to_json().encode())
    assert actual <= bound <= 20 * actual + 2**20
