"""The lines view of a range of queries (viz/lines/lines_range.py) on a head that spreads its
weight thin: issue 49 saw an empty panel for a random-weight model at 4,000 tokens, every weight
about 1/4,000, none reaching the 0.001 a line needs."""

from __future__ import annotations

import numpy as np

from attnlens.viz.lines.lines_range import MIN_WEIGHT, RANGE_QUERIES, TOP_KEYS, lines_range

S = 2000  # keys: an even head gives each 1/2,000 = 0.0005, under MIN_WEIGHT


def test_a_head_spread_thin_draws_each_querys_heaviest_keys_and_says_why(synth: type) -> None:
    rng = np.random.default_rng(0)
    w = rng.uniform(0.9, 1.1, (S, S)).astype(np.float32)
    w /= w.sum(1, keepdims=True)  # every row a distribution, every weight near 1/S
    assert w.max() < MIN_WEIGHT
    src = [f"w{i}" for i in range(S)]
    tr = synth.make_trace(src=src, L=1, H=1, encoder_self=w[None, None])
    lines = lines_range(tr, "encoder_self", 0, 0, S - RANGE_QUERIES)
    assert len(lines.query) > RANGE_QUERIES  # not an empty panel
    rows = w[S - RANGE_QUERIES :]
    for i in np.unique(lines.query):  # each line one of its query's 8 heaviest keys (of the
        drawn = {lines.key_at[k] for k in lines.key[lines.query == i]}  # MAX_KEYS kept)
        assert drawn <= set(np.argsort(-rows[i])[:TOP_KEYS].tolist())
    assert "no weight of these queries reaches 0.001" in lines.title
    assert "so each query's 8 heaviest keys are drawn" in lines.title


def test_a_head_with_weights_over_the_threshold_draws_only_those(synth: type) -> None:
    tr = synth.make_trace(src=list("abcdef"), L=1, H=1)
    lines = lines_range(tr, "encoder_self", 0, 0, 0)
    weights = tr.head("encoder_self", 0, 0)
    assert len(lines.query) == min(TOP_KEYS, 6) * 6 - int((weights < MIN_WEIGHT).sum())
    assert "heaviest keys are drawn" not in lines.title
