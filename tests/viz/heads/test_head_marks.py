"""Modern attention shown as it is (viz/heads/head_marks.py, viz/lines/lines_range.py): query heads
grouped under the key/value head they share, the sliding-window band, attention sinks and the
position scheme, each read from the record; the lines view of a range of queries at any length, its
weights the record's own. On models of real head shapes with random weights built here
(tests/helpers/long_modern.py): Llama (32 query / 8 key-value heads), Mistral (a window on every
layer), Gemma-2 (sliding and global layers alternating)."""

from __future__ import annotations

import base64
import dataclasses

import numpy as np
import pytest

import attnlens
from attnlens.record.trace import Trace
from attnlens.viz.heads.head_grid import head_grid
from attnlens.viz.heads.head_marks import SINK_SHARE, head_marks, kv_group, mask_rule
from attnlens.viz.heads.head_window import head_window
from attnlens.viz.heads.overview_grid import every_head_grid
from attnlens.viz.heads.window_figure import window_figure
from attnlens.viz.lines.lines_range import MAX_KEYS, RANGE_QUERIES, TOP_KEYS, lines_range
from helpers.long_gpt2 import long_gpt2, words
from helpers.long_modern import WINDOW, long_modern

N = 400  # words: 401 positions with the start token
KIND = "decoder_self"


def _trace(shape: str, tmp: pytest.TempPathFactory, record: str = "scores") -> Trace:
    where = tmp.mktemp(shape)
    folder = long_gpt2(where) if shape == "gpt2" else long_modern(shape, where)
    return attnlens.load(str(folder)).trace(words(N), record=record)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Trace:
    return _trace("llama", tmp_path_factory)


@pytest.fixture(scope="module")
def gemma2(tmp_path_factory: pytest.TempPathFactory) -> Trace:
    return _trace("gemma2", tmp_path_factory)


@pytest.fixture(scope="module")
def mistral_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Trace, Trace]:
    """The same input on Mistral, kept as scores and as weights."""
    lens = attnlens.load(str(long_modern("mistral", tmp_path_factory.mktemp("mistral"))))
    return lens.trace(words(N), record="scores"), lens.trace(words(N), record="weights")


def test_query_heads_are_grouped_under_the_key_head_the_record_says_they_share(
    llama: Trace, tmp_path_factory: pytest.TempPathFactory
) -> None:
    assert llama.scores is not None and llama.scores[KIND][0].k.shape[0] == 8
    assert kv_group(llama, KIND) == 4  # 32 query heads over 8 key/value heads
    data = every_head_grid(llama, KIND).data()
    assert data["kv_group"] == 4 and data["shape"][:2] == [2, 32]
    assert "in groups of 4 that share a key/value head (GQA)" in str(data["title"])
    plain = _trace("gpt2", tmp_path_factory)  # one key head per query head: nothing changes
    assert kv_group(plain, KIND) is None
    grid = every_head_grid(plain, KIND).data()
    assert grid["kv_group"] is None and "GQA" not in str(grid["title"])
    assert llama.model.kv_heads == 8 and plain.model.kv_heads is None
    weights = dataclasses.replace(llama, scores=None, summaries=None,
                                  decoder_self=np.zeros((2, 32, 3, 3), np.float32),
                                  tgt_tokens=llama.tgt_tokens[:3], tgt_shown=None)  # fmt: skip
    assert head_grid(weights, KIND).kv_group == 4  # a record of weights: its model says so
    unstated = dataclasses.replace(weights, model=dataclasses.replace(llama.model, kv_heads=None))
    assert head_grid(unstated, KIND).kv_group is None  # nothing stated: nothing guessed
    assert Trace.from_json(weights.to_json()).model.kv_heads == 8  # kept in a file
    older = weights.to_dict()
    del older["model"]["kv_heads"]
    assert Trace.from_dict(older).model.kv_heads is None  # a record saved before reads


def test_the_window_band_follows_each_layers_rule_alternating_on_gemma2(gemma2: Trace) -> None:
    sliding, full = head_marks(gemma2, KIND, 0, 1), head_marks(gemma2, KIND, 1, 1)
    assert sliding.window == WINDOW and full.window is None
    whole = ((0, N + 1), (0, N + 1))
    far, near = sliding.lines(*whole)
    assert far == [0.0, WINDOW - 1.0, N - WINDOW + 1.0, float(N)]  # j = i − W + 1
    assert near == [0.0, 0.0, float(N), float(N)]  # the diagonal j = i
    assert full.lines(*whole) == []
    rule = gemma2.scores[KIND][0].mask  # type: ignore[index]
    for (j0, i0, j1, i1), out in ((far, -1), (near, 1)):  # on the edge allowed, past it not
        for i, j in ((int(i0), int(j0)), (int(i1), int(j1))):
            ok = rule.allowed(np.array([i]), np.arange(N + 2))
            assert ok is not None and ok[0, j] and not ok[0, j + out]
    zoomed = sliding.lines((300, 350), (200, 260))  # only the far edge crosses this window
    assert zoomed == [[237.0, 300.0, 259.0, 322.0]]
    caption = sliding.caption()
    assert f"sliding window of {WINDOW} keys" in caption and "rotary positions (RoPE)" in caption
    window = head_window(gemma2, KIND, 0, 1)
    shapes = window_figure(window, marks=sliding).layout.shapes
    assert [(s.x0, s.y0, s.x1, s.y1) for s in shapes] == [tuple(far), tuple(near)]
    subtitle = window_figure(window, marks=sliding).layout.title.subtitle.text
    assert f"sliding window of {WINDOW}" in subtitle
    assert window_figure(head_window(gemma2, KIND, 1, 1), marks=full).layout.shapes == ()


def test_a_record_of_weights_gives_the_window_its_mask_follows(
    mistral_pair: tuple[Trace, Trace],
) -> None:
    scores, weights = mistral_pair
    for layer in (0, 1):
        assert mask_rule(weights, KIND, layer) == mask_rule(scores, KIND, layer)
        assert mask_rule(weights, KIND, layer).window == WINDOW
    for head in range(4):  # the sink share: the record's summary, or the weights' column 0
        a = head_marks(scores, KIND, 1, head).first_share
        b = head_marks(weights, KIND, 1, head).first_share
        assert a is not None and b is not None and abs(a - b) < 1e-5


def test_a_head_that_parks_weight_on_the_first_token_is_marked_a_sink(gemma2: Trace) -> None:
    assert gemma2.summaries is not None
    summary = gemma2.summaries[KIND]
    first = summary.first.copy()
    first[1, 2] = 0.8
    sunk = dataclasses.replace(gemma2, summaries={KIND: dataclasses.replace(summary, first=first)})
    marks = head_marks(sunk, KIND, 1, 2)
    assert marks.sink and "attention sink: key 0 takes 80% on average" in marks.caption()
    assert marks.data((0, N + 1), (0, N + 1))["sink"]
    assert not marks.data((0, N + 1), (10, 50))["sink"]  # key 0 out of view: nothing outlined
    other = head_marks(sunk, KIND, 1, 1)
    assert other.first_share is not None and other.first_share < SINK_SHARE
    assert not other.sink and "sink" not in other.caption()
    window = head_window(sunk, KIND, 1, 2)
    (outline,) = window_figure(window, marks=marks).layout.shapes
    assert (outline.type, outline.x0, outline.x1) == ("rect", -0.5, window.col_edges[1] - 0.5)


def _u16(text: object) -> np.ndarray:
    return np.frombuffer(base64.b64decode(str(text)), dtype="<u2")


def test_the_lines_of_a_range_of_queries_are_bounded_and_the_records_weights(
    llama: Trace,
) -> None:
    start = 100
    lines = lines_range(llama, KIND, 1, 5, start)
    data = lines.data()
    assert len(lines.queries) == RANGE_QUERIES and lines.query_at == tuple(range(100, 356))
    assert 0 < data["count"] <= RANGE_QUERIES * TOP_KEYS and len(lines.keys) <= MAX_KEYS
    assert data["query_at"][0] == start and data["key_at"] == sorted(data["key_at"])
    rows = llama.head(KIND, 1, 5, slice(start, start + RANGE_QUERIES))  # (256, K) exact
    q, k = _u16(data["query"]), _u16(data["key"])
    key_at = np.array(lines.key_at)
    weight = np.frombuffer(base64.b64decode(str(data["weight"])), dtype="<f4")
    np.testing.assert_array_equal(weight, rows[q, key_at[k]])  # the record's own weights
    assert (weight >= 0.001).all() and (np.diff(weight) <= 0).all()  # strongest first
    eighth = -np.sort(-rows, axis=1)[:, TOP_KEYS - 1]  # each query's 8th heaviest weight
    assert (weight >= eighth[q]).all()
    counts = np.bincount(q, minlength=RANGE_QUERIES)
    assert counts.max() <= TOP_KEYS
    assert "queries 100–355, each to its 8 heaviest keys" in lines.title


def test_the_lines_of_the_last_queries_of_a_window_stay_in_its_band(
    mistral_pair: tuple[Trace, Trace],
) -> None:
    scores, _ = mistral_pair
    lines = lines_range(scores, KIND, 0, 0, N + 1 - 50, queries=50)
    q = np.array(lines.query_at)[lines.query]
    j = np.array(lines.key_at)[lines.key]
    assert len(lines.queries) == 50 and ((q - j >= 0) & (q - j < WINDOW)).all()
    none = lines_range(scores, KIND, 0, 0, 300, queries=10, min_weight=0.99)
    assert "no weight of these queries reaches 0.99" in none.title  # said, and (issue 49: the
    assert none.data()["count"] == 10 * TOP_KEYS  # panel was empty) each one's heaviest drawn
    with pytest.raises(ValueError, match=r"the first query 401 is outside 0\.\.400"):
        lines_range(scores, KIND, 0, 0, N + 1)
    with pytest.raises(ValueError, match="257 queries"):
        lines_range(scores, KIND, 0, 0, 0, queries=257)


def test_each_rows_heaviest_keys_are_those_a_full_sort_finds() -> None:
    """Rows with fewer heavy weights than lines keep them all; rows with more keep exactly their
    `top` largest (here no two weights are equal, so the set is unique)."""
    from attnlens.viz.lines.lines_range import heaviest

    rng = np.random.default_rng(0)
    w = rng.random((40, 300)).astype(np.float32) * 1e-4  # every weight light
    w[::2] += rng.permutation(300)[None, :300].astype(np.float32) * 1e-3  # even rows: many heavy
    w[1::4, :3] = [0.5, 0.3, 0.2]  # some odd rows: three heavy weights
    top, least = 8, 0.001
    q, k = heaviest(w, top, least)
    got = {(int(a), int(b)) for a, b in zip(q, k, strict=True)}
    assert len(got) == len(q)  # no line twice
    expected = set()
    for i, row in enumerate(w):
        order = np.argsort(-row)[:top]
        expected |= {(i, int(j)) for j in order if row[j] >= least}
    assert got == expected
    assert heaviest(w[:, :0], top, least)[0].size == 0
