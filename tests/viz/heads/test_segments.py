"""The sentence-pair view: the head's grid split at the boundary, or one block of it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnlens.record.trace import Trace
from attnlens.viz.heads.segments import pair_heatmap, sentence_b_start

SRC = ("[CLS]", "the", "cat", "[SEP]", "a", "dog", "[SEP]")


@pytest.fixture
def pair(synth) -> Trace:  # type: ignore[no-untyped-def]
    tr = synth.make_trace(src=SRC)
    return replace(tr, src_segments=(0, 0, 0, 0, 1, 1, 1))


def test_the_whole_grid_is_split_into_four_named_blocks(pair: Trace) -> None:
    fig = pair_heatmap(pair, 1, 2)
    lines = fig.layout.shapes
    assert len(lines) == 2 and {lines[0].x0, lines[1].y0} == {3.5}
    assert {a.text for a in fig.layout.annotations} == {"A→A", "A→B", "B→A", "B→B"}
    assert fig.layout.title.subtitle.text == "sentence A: positions 0–3 · sentence B: 4–6"


@pytest.mark.parametrize(
    ("block", "rows", "columns"), [("A→B", range(4), range(4, 7)), ("B→A", range(4, 7), range(4))]
)
def test_one_block_holds_the_weights_between_the_two_sentences(
    pair: Trace, block: str, rows: range, columns: range
) -> None:
    fig = pair_heatmap(pair, 1, 2, block)  # type: ignore[arg-type]
    cells = fig.data[0]
    assert pair.encoder_self is not None
    want = pair.encoder_self[1, 2][np.ix_(list(rows), list(columns))]
    np.testing.assert_allclose(np.asarray(cells.z, dtype=float), want, atol=1e-7)
    assert [label.split(" · ")[1] for label in cells.y] == [SRC[i] for i in rows]
    assert fig.layout.title.text.startswith(f"sentence {block[0]} → sentence {block[-1]}")


def test_a_record_of_one_text_is_refused(synth) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="one text, not a sentence pair"):
        sentence_b_start(synth.make_trace())
    tr = replace(synth.make_trace(src=SRC), src_segments=(0,) * 4 + (1,) * 3)
    with pytest.raises(ValueError, match="block must be one of"):
        pair_heatmap(tr, 0, 0, "A→C")  # type: ignore[arg-type]
