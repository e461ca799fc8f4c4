"""Figures made clickable: typed-array customdata become lists. (The every-head grid's clicks:
test_app_canvas.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import attnlens
from attnlens import viz
from attnlens.app.web.click_targets import clickable
from attnlens.viz.decoding.decode_step import up_to_step


@pytest.fixture(scope="module")
def lens(tiny_model_dir: Path) -> attnlens.Lens:
    return attnlens.load(str(tiny_model_dir))


def test_tree_cut_at_a_step(lens: attnlens.Lens) -> None:
    run = lens.decode("bad", strategy="beam", beam_size=2, max_len=5)
    fig = clickable(up_to_step(viz.beam_tree(run), 1))
    assert tuple(fig.layout.xaxis.range) == (-0.5, 1.5)
    assert fig.layout.title.text.endswith("up to step 1")
    nodes = [t for t in json.loads(fig.to_json())["data"] if t.get("customdata") is not None]
    assert nodes and all(isinstance(t["customdata"], list) for t in nodes)  # clickable in the app
    edges = [t for t in fig.data if t.mode == "lines"]
    ends = [x for t in edges for x in list(t.x)[1::3]]
    assert ends and max(ends) == 1  # edges into step 1 kept, none into the steps ahead
    full = [x for t in viz.beam_tree(run).data if t.mode == "lines" for x in list(t.x)[1::3]]
    assert max(full) == len(run.steps) - 1 > 1
    assert not [t for t in up_to_step(viz.beam_tree(run), 0).data if t.mode == "lines" and t.x]
