"""The norms' overviews a trace keeps (model/lenses/pooling.py, Summary.overview_norm_mean and
overview_norm_max), against a brute-force float64 αᵢⱼ ‖f_h(xⱼ)‖ pooled from the record's own
queries, keys and norms, each block's mean and largest: random and sharp heads
(scores ±40), causal, windowed and cross layers, grouped-query attention; our translate model
and the Hugging Face zoo's Llama (rotary, grouped), each with blocks of several rows and keys."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from attnlens.model.lenses import summaries
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.own import OwnLens
from attnlens.model.lenses.registry import load
from attnlens.model.lenses.summaries import summarise
from attnlens.record.scores import LayerScores, MaskRule, widened
from attnlens.record.summary import Summary, summaries_from, summary_tree
from attnlens.record.trace import Trace
from helpers.hf_zoo import zoo_folder
from helpers.sharp import SHARP, largest_score, sharp_hf_folder, sharpen

SIDE = 5  # overview blocks a side in these tests: several rows and keys a block
TEXT = "the cat sat on the mat and the dog sat on the cat while a bird sang to the mouse"
RTOL, ATOL = 2e-3, 1e-6  # the overview is float16: 2⁻¹¹ of each value


def exact_weights(layer: LayerScores, head: int) -> np.ndarray:
    """(Q, K) float64: softmax of the record's own q · k, masked, computed here from scratch."""
    _, Q, K = layer.shape
    q = widened(layer.q[head], layer.dtype)
    k = widened(layer.k[layer.key_head(head)], layer.dtype)
    s = q @ k.T * layer.scale
    ok = layer.mask.allowed(np.arange(Q), np.arange(K))
    if ok is not None:
        s = np.where(ok, s, -np.inf)
    s -= s.max(-1, keepdims=True)
    p = np.exp(s)
    return p / p.sum(-1, keepdims=True)


def brute(layer: LayerScores, carried: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """(H, B_q, B_k, 2) float64: each block's mean and max of αᵢⱼ ‖f_h(xⱼ)‖."""
    out = []
    for h in range(layer.n_heads):
        an = exact_weights(layer, h) * carried[h][None, :].astype(np.float64)
        out.append([[(an[r[i] : r[i + 1], c[j] : c[j + 1]].mean(),
                      an[r[i] : r[i + 1], c[j] : c[j + 1]].max())
                     for j in range(len(c) - 1)] for i in range(len(r) - 1)])  # fmt: skip
    return np.array(out)


def check_summary(summary: Summary, layers: tuple[LayerScores, ...], carried: np.ndarray) -> None:
    """Both norms' overviews, each block's mean and largest, against the brute force."""
    kept = (summary.overview_norm_mean, summary.overview_norm_max)
    assert all(o is not None and o.dtype == np.float16 for o in kept)
    r, c = summary.row_edges, summary.col_edges
    assert np.diff(r)[0] > 1 and np.diff(c)[0] > 1  # blocks of several rows and keys
    for i, layer in enumerate(layers):
        want = brute(layer, carried[i], r, c)  # (H, B_q, B_k, mean and max)
        for j, (name, got) in enumerate(zip(("mean", "max"), kept, strict=True)):
            assert got is not None
            np.testing.assert_allclose(got[i].astype(np.float64), want[..., j], rtol=RTOL,
                                       atol=ATOL, err_msg=f"layer {i}, block {name}")  # fmt: skip


def random_layer(
    rng: np.random.Generator, Q: int, K: int, rule: MaskRule, size: float
) -> LayerScores:
    H, H_kv, d = 4, 2, 8
    q = (rng.standard_normal((H, Q, d)) * size).astype(np.float32)
    k = rng.standard_normal((H_kv, K, d)).astype(np.float32)
    scores = [widened(q[h], "float32") @ widened(k[h // 2], "float32").T * 0.7 for h in range(H)]
    ok = rule.allowed(np.arange(Q), np.arange(K))
    lse = [np.log(np.where(ok if ok is not None else True, np.exp(s - s.max()), 0).sum(-1))
           + s.max() for s in scores]  # fmt: skip
    return LayerScores(q, k, np.stack(lse), 0.7, rule)


@pytest.mark.parametrize(
    ("Q", "K", "rule", "size"),
    [
        (60, 60, MaskRule(True), 1.0),
        (60, 60, MaskRule(True), 9.0),  # sharp: scores past ±40
        (60, 60, MaskRule(True, 7), 1.0),
        (48, 23, MaskRule(), 9.0),  # a cross layer
    ],
)
def test_the_recorded_norm_overview_is_the_float64_pooled_mean(
    Q: int, K: int, rule: MaskRule, size: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(summaries, "OVERVIEW", SIDE)
    rng = np.random.default_rng(5)
    layers = tuple(random_layer(rng, Q, K, rule, size) for _ in range(2))
    if size > 1:
        assert largest_score(layers) >= SHARP
    carried = rng.uniform(0.1, 30.0, (2, 4, K)).astype(np.float32)
    summary, _ = summarise(layers, [], carried=carried)
    check_summary(summary, layers, carried)
    plain, _ = summarise(layers, [])  # without norms: none, and the weights' overview the same
    assert plain.overview_norm_mean is None and plain.overview_norm_max is None
    assert np.array_equal(plain.overview_mean, summary.overview_mean)
    assert np.array_equal(plain.overview_max, summary.overview_max)


def test_tiles_of_part_of_a_block_keep_the_same_overviews(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where one block of rows and keys of every head passes a tile's cells, a tile is a few
    rows of one block: each block's largest weight and αᵢⱼ ‖f_h(xⱼ)‖ are then gathered over
    several tiles, to the same numbers (within float16: the tiles' products may round apart)."""
    from attnlens.model.lenses import pooling

    monkeypatch.setattr(summaries, "OVERVIEW", SIDE)
    rng = np.random.default_rng(7)
    layers = (random_layer(rng, 60, 60, MaskRule(True), 9.0),)
    carried = rng.uniform(0.1, 30.0, (1, 4, 60)).astype(np.float32)
    whole, _ = summarise(layers, [], carried=carried)
    monkeypatch.setattr(pooling, "TILE_CELLS", 100)  # 4 heads × 12 × 12 a block: 2 rows a tile
    parts, _ = summarise(layers, [], carried=carried)
    check_summary(parts, layers, carried)
    for name in ("overview_max", "overview_norm_max"):
        got, want = (getattr(x, name).astype(np.float64) for x in (parts, whole))
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=name)


@functools.cache
def own(name: str, factor: float = 1.0) -> OwnLens[Any]:
    """A bundled model of ours, loaded afresh (load caches none), its queries times factor."""
    found = load(name)
    assert isinstance(found, OwnLens)
    sharpen(found.net, factor)
    return found


@pytest.mark.parametrize("factor", [1.0, 40.0])
def test_our_models_layers_pool_their_norms_exactly(
    factor: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our models' records of scores keep no overview (they are short); their layers and
    norms pooled as a Hugging Face trace pools its own: every kind, self and cross."""
    monkeypatch.setattr(summaries, "OVERVIEW", SIDE)
    trace = own("translate", factor).trace("the cat sees a big house near the old red tree",
                                           record="scores")  # fmt: skip
    assert trace.scores is not None and trace.norms is not None
    if factor > 1:
        assert max(largest_score(v) for v in trace.scores.values()) >= SHARP
    for kind, layers in trace.scores.items():
        carried = trace.norms[kind].carried
        summary, _ = summarise(layers, [], carried=carried)
        check_summary(summary, layers, carried)


@functools.cache
def llama(sharp_in: Path | None = None) -> HFLens:
    if sharp_in is None:
        return HFLens(zoo_folder("llama"), torch.device("cpu"), name="llama")
    base = llama().trace(TEXT, record="scores")
    assert base.scores is not None
    factor = 1.5 * SHARP / largest_score(base.scores["decoder_self"])
    folder = sharp_hf_folder(zoo_folder("llama"), sharp_in / "sharp-llama", factor, "q_proj")
    return HFLens(folder, torch.device("cpu"), name="sharp-llama")


def llama_trace(sharp: bool, root: Path) -> Trace:
    return llama(root if sharp else None).trace(TEXT, record="scores")


@pytest.mark.parametrize("sharp", [False, True])
def test_a_hugging_face_trace_keeps_its_norms_overview(
    sharp: bool, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The zoo's Llama (rotary, grouped-query: 4 query heads on 2 key heads), causal: the
    trace's own overview of the norms, and it reads back from JSON and NPZ."""
    monkeypatch.setattr(summaries, "OVERVIEW", SIDE)
    trace = llama_trace(sharp, tmp_path_factory.mktemp("sharp"))
    assert trace.scores is not None and trace.summaries is not None and trace.norms is not None
    layers = trace.scores["decoder_self"]
    assert layers[0].k.shape[0] < layers[0].n_heads  # grouped
    if sharp:
        assert largest_score(layers) >= SHARP
    summary = trace.summaries["decoder_self"]
    check_summary(summary, layers, trace.norms["decoder_self"].carried)
    for back in (Trace.from_json(trace.to_json()), Trace.from_npz(trace.to_npz())):
        assert back.equals(trace) and back.summaries is not None
        assert back.summaries["decoder_self"].same(summary)


@pytest.mark.parametrize(
    "left_out", [("overview_norm_max",), ("overview_norm_mean", "overview_norm_max")]
)
def test_older_summaries_load_without_the_norms_overviews(left_out: tuple[str, ...]) -> None:
    """Records written before the block max of the norms was kept, or either overview."""
    rng = np.random.default_rng(1)
    layer = random_layer(rng, 20, 20, MaskRule(True), 1.0)
    summary, _ = summarise((layer,), [], carried=np.ones((1, 4, 20), np.float32))
    tree = summary_tree({"decoder_self": summary})
    older = {k: {f: v for f, v in fields.items() if f not in left_out}
             for k, fields in tree.items()}  # fmt: skip
    back = summaries_from(older)["decoder_self"]
    assert all(getattr(back, f) is None for f in left_out) and not back.same(summary)
    assert summaries_from(tree)["decoder_self"].same(summary)
