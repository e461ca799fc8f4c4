"""The every-head grid's payload: shares as one byte each on the cube-root scale, pooled by the
mean into bounded thumbnails, labels as plain text, the same cells as the Plotly model view."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from attnlens.record.trace import Trace
from attnlens.viz import head_grid, model_view
from attnlens.viz.heads.head_grid import thumbnail_side
from attnlens.viz.heads.model_view import CELL_BUDGET, MAX_SIDE
from attnlens.viz.shared.palette import BLUES


def one_head(rows: np.ndarray) -> np.ndarray:
    """A (1, 1, Q, K) attention of one layer and one head."""
    return np.asarray(rows, dtype=np.float32)[None, None]


def test_shares_become_bytes_on_the_cube_root_scale(synth: type) -> None:
    """Byte = 1 + round(∛share · 254), worked by hand: ∛0.125 = 0.5 → 128; ∛0.875 = 0.95647
    → 242.94 → 244; share 1 → 255, share 0 → 1 (drawn as the scale's lightest colour)."""
    w = one_head([[0.125, 0.875, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    tr = synth.make_trace(src=("a", "b", "</s>"), tgt=("<s>",), L=1, H=1, encoder_self=w)
    grid = head_grid(tr, "encoder_self")
    assert grid.cells.dtype == np.uint8 and grid.cells.shape == (1, 1, 3, 3)
    assert grid.cells[0, 0].tolist() == [[128, 244, 1], [1, 1, 255], [255, 1, 1]]
    assert not grid.pooled and grid.note() == ""


def test_masked_cells_are_byte_zero(trace: Trace) -> None:
    """Decoder self-attention cannot look ahead: those cells are 0 (drawn transparent), never
    the byte of a zero share."""
    cells = head_grid(trace, "decoder_self").cells  # 3 target positions, causal
    above = np.triu_indices(3, 1)
    assert (cells[:, :, above[0], above[1]] == 0).all()
    assert (cells[:, :, np.arange(3), np.arange(3)] >= 1).all()


def test_blocks_are_mean_pooled_and_said_so(synth: type) -> None:
    """8 positions in blocks of 2 (max_side 4), query q looking at key q - 1: block (1, 0) holds
    query 2 → key 1 and query 3 → key 2, so its queries give it a mean share of 0.5 and block
    (1, 1) the other 0.5: ∛0.5 · 254 = 201.6 → byte 203."""
    T = 8
    w = synth.pattern(1, 1, T, 1)
    tr = synth.make_trace(src=[str(i) for i in range(T)], tgt=("<s>",), L=1, H=1, encoder_self=w)
    grid = head_grid(tr, "encoder_self", max_side=4)
    assert grid.row_edges == grid.col_edges == (0, 2, 4, 6, 8)
    expected = [[255, 1, 1, 1], [203, 203, 1, 1], [1, 203, 203, 1], [1, 1, 203, 203]]
    assert grid.cells[0, 0].tolist() == expected
    assert grid.pooled
    assert grid.note() == (
        "in 4×4 blocks of 2×2 positions: a cell is the mean over its queries of the share "
        "they give its keys"
    )
    assert grid.data()["note"] == grid.note()


def test_the_same_cells_as_the_plotly_model_view(trace: Trace) -> None:
    """Same visual meaning: every thumbnail's bytes are the model view's tile, byte for byte."""
    for kind in ("encoder_self", "decoder_self", "cross"):
        grid = head_grid(trace, kind)  # type: ignore[arg-type]
        fig = model_view(trace, kind)  # type: ignore[arg-type]
        z = np.asarray(fig.data[0].z)
        L, H, q, k = grid.cells.shape
        px, py = round(1 / fig.data[0].dx), round(1 / fig.data[0].dy)
        for layer in range(L):
            for head in range(H):
                tile = z[layer * py : layer * py + q, head * px : head * px + k]
                np.testing.assert_array_equal(grid.cells[layer, head], tile)


def test_minilm_sized_input_is_bounded(synth: type) -> None:
    """6 layers × 12 heads at 512 tokens: 72 thumbnails of at most MAX_SIDE² cells, CELL_BUDGET
    in all: 57 × 57 blocks of 9 × 9 positions (the last of 8), 233,928 bytes, 311,904
    characters of base64."""
    L, H, T = 6, 12, 512
    noise = np.random.default_rng(0).random((L, H, T, T), dtype=np.float32)
    tr = synth.make_trace(src=[str(i) for i in range(T)], tgt=("<s>",), L=L, H=H,
                          encoder_self=noise / noise.sum(-1, keepdims=True))  # fmt: skip
    grid = head_grid(tr, "encoder_self", selected=(5, 11))
    assert grid.cells.shape == (6, 12, 57, 57)  # ceil(512 / 9) = 57 blocks of 9 (the last 8)
    assert grid.cells.size <= CELL_BUDGET and max(grid.cells.shape[2:]) <= MAX_SIDE
    payload = json.dumps(grid.data())
    assert len(base64.b64decode(grid.data()["cells"])) == 6 * 12 * 57 * 57
    assert len(payload) < 360_000  # the cells' base64 and 2 × 512 short labels
    assert "57×57 blocks of 9×9 positions" in grid.note()


@pytest.mark.parametrize(
    ("L", "H", "max_side", "max_cells", "side"),
    [(1, 1, 64, 250_000, 64), (6, 12, 64, 250_000, 58), (12, 12, 64, 250_000, 41),
     (2, 4, 10, 250_000, 10), (1000, 16, 64, 250_000, 3), (2000, 200, 64, 250_000, 1)],
)  # fmt: skip
def test_thumbnail_side_keeps_both_bounds(
    L: int, H: int, max_side: int, max_cells: int, side: int
) -> None:
    assert thumbnail_side(L, H, max_side, max_cells) == side
    assert side == 1 or L * H * side**2 <= max_cells


def test_payload_round_trips_its_cells_and_colours(trace: Trace) -> None:
    grid = head_grid(trace, "cross", selected=(1, 2))
    data = json.loads(json.dumps(grid.data()))
    cells = np.frombuffer(base64.b64decode(data["cells"]), dtype=np.uint8)
    np.testing.assert_array_equal(cells.reshape(data["shape"]), grid.cells)
    assert data["shape"] == [2, 3, 3, 4] and data["selected"] == [1, 2]
    assert data["colors"][0] == [1, *BLUES[0]] and data["colors"][-1] == [255, *BLUES[-1]]
    # ticks sit at their share's byte: ∛0.01 · 254 = 54.7 → 56; ∛0.25 · 254 = 160.0 → 161
    assert dict((text, byte) for byte, text in data["ticks"]) == {
        "0": 1, "0.01": 56, "0.05": 95, "0.25": 161, "0.5": 203, "1": 255
    }  # fmt: skip
    assert (data["levels"], data["power"]) == (254, 3)


def test_a_head_outside_the_grid_is_refused(trace: Trace) -> None:
    with pytest.raises(ValueError, match=r"head 3 is outside 0\.\.2"):
        head_grid(trace, "cross", selected=(0, 3))
    with pytest.raises(ValueError, match=r"layer 2 is outside 0\.\.1"):
        head_grid(trace, "cross", selected=(2, 0))


def test_labels_are_plain_text_of_each_position(markup_trace: Trace, synth: type) -> None:
    """Markup stays literal (the browser sets labels as text, so nothing is escaped either);
    decoder rows read 'input → produced' as on the heatmap; a space shows as '␣'."""
    grid = head_grid(markup_trace, "cross")
    markup = synth.markup
    assert grid.key_labels == (*(f"{i} · {m}" for i, m in enumerate(markup)), "3 · </s>")
    assert grid.query_labels[0] == f"0 · <s> → {markup[0]}"
    assert grid.query_labels[-1] == f"3 · {markup[-1]} → end"
    spaced = synth.make_trace(src=("a", " ", "</s>"), tgt=("<s>",))
    assert head_grid(spaced, "encoder_self").key_labels[1] == "1 · ␣"
    assert head_grid(spaced, "encoder_self").query_labels[1] == "1 · ␣"


def test_labels_of_a_window_are_those_of_its_positions(markup_trace: Trace) -> None:
    """Labels asked for a window of positions are the whole head's for those positions (an
    encoder–decoder's decoder rows with what each produced)."""
    from attnlens.viz.heads.head_grid import grid_labels

    for kind in ("cross", "decoder_self", "encoder_self"):
        queries, keys = grid_labels(markup_trace, kind)
        part = grid_labels(markup_trace, kind, slice(1, 3), slice(2, None))
        assert part == (queries[1:3], keys[2:])
