"""Is attention an explanation? Raw attention, rollout and flow ranked against input erasure
(Abnar & Zuidema 2020), from ErasureCase records: the importances, Spearman's ρ per layer, and
the result and table the app and `attnlens experiment explanation` show.

On a decoder-only model the output token is predicted at the last position q: raw attention is
row q of a layer's self-attention (heads averaged), rollout and flow follow the self-attention
graph with the residual as identity (analysis/rollout.py). On an encoder-decoder the inputs are the
source: raw attention is a decoder layer's cross-attention row; rollout and flow run through
the encoder's layers, then each decoder layer's self-attention and its cross-attention (half
residual, half the memory, as rollout treats every sublayer).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from attnlens.analysis.flow import layered_capacity, max_flow
from attnlens.analysis.rollout import attention_rollout, residual_mixing
from attnlens.record.erasure import ErasureCase
from attnlens.record.stats import spearman

Method = Literal["raw", "rollout", "flow"]
METHODS: tuple[Method, ...] = ("raw", "rollout", "flow")
FLOW_BUDGET = 3_000_000  # graph nodes² × inputs above which flow is skipped (seconds, not hours)


def layers_of(case: ErasureCase) -> int:
    """Layers whose attention explains the output (a decoder's, or an encoder-decoder's
    decoder layers)."""
    weights = case.cross if case.cross is not None else case.decoder_self
    assert weights is not None, "a case holds the attention that produced its output"
    return int(weights.shape[0])


def importance(case: ErasureCase, method: Method, layer: int) -> np.ndarray:
    """(K,) each input's importance for the output token after `layer`, by one method."""
    if case.seq2seq:
        return _seq2seq(case, method, layer)
    weights, q = case.decoder_self, case.output_position
    assert weights is not None
    if method == "raw":
        raw: np.ndarray = weights[layer, :, q].astype(np.float64).mean(0)
        return raw
    if method == "rollout":
        rolled: np.ndarray = attention_rollout(weights)[layer, q]
        return rolled
    mixing = residual_mixing(weights)[: layer + 1]  # (l + 1, T, T)
    T = mixing.shape[-1]
    cap = layered_capacity(mixing)
    if cap.shape[0] ** 2 * T > FLOW_BUDGET:
        return np.full(T, np.nan)
    return np.array([max_flow(cap, k, (layer + 1) * T + q) for k in range(T)])


def _seq2seq(case: ErasureCase, method: Method, layer: int) -> np.ndarray:
    cross, t = case.cross, case.output_position
    assert cross is not None and case.encoder_self is not None and case.decoder_self is not None
    if method == "raw":
        raw: np.ndarray = cross[layer, :, t].astype(np.float64).mean(0)
        return raw
    if method == "rollout":
        rolled: np.ndarray = _seq2seq_rollout(case, layer)[t]
        return rolled
    cap, sink = _seq2seq_graph(case, layer, t)
    S = cross.shape[-1]
    if cap.shape[0] ** 2 * S > FLOW_BUDGET:
        return np.full(S, np.nan)
    return np.array([max_flow(cap, k, sink) for k in range(S)])


def _mean_cross(cross: np.ndarray, layer: int) -> np.ndarray:
    """A decoder layer's cross-attention, heads averaged: (T, S), rows summing to 1."""
    c = cross[layer].astype(np.float64).mean(0)
    out: np.ndarray = c / c.sum(-1, keepdims=True)
    return out


def _seq2seq_rollout(case: ErasureCase, layer: int) -> np.ndarray:
    """(T, S): how much each decoder position after `layer` draws on each source input."""
    assert case.encoder_self is not None and case.decoder_self is not None
    assert case.cross is not None
    memory = attention_rollout(case.encoder_self)[-1]  # (S, S): memory ← source inputs
    own = residual_mixing(case.decoder_self)  # (L, T, T)
    S, T = memory.shape[0], own.shape[-1]
    drawn = np.hstack([np.zeros((T, S)), np.eye(T)])  # (T, S + T): source and target inputs
    for i in range(layer + 1):
        drawn = own[i] @ drawn
        via_memory = np.hstack([_mean_cross(case.cross, i) @ memory, np.zeros((T, T))])
        drawn = 0.5 * drawn + 0.5 * via_memory
    source: np.ndarray = drawn[:, :S]
    return source


def _seq2seq_graph(case: ErasureCase, layer: int, t: int) -> tuple[np.ndarray, int]:
    """The attention graph from source inputs to decoder position t after `layer`, and t's
    node: encoder layers, then per decoder layer its self-attention and cross-attention."""
    assert case.encoder_self is not None and case.decoder_self is not None
    assert case.cross is not None
    enc = residual_mixing(case.encoder_self)  # (Le, S, S)
    own = residual_mixing(case.decoder_self)  # (Ld, T, T)
    Le, S, T = enc.shape[0], enc.shape[-1], own.shape[-1]
    base = (Le + 1) * S  # first decoder node: the decoder's inputs
    size = base + (2 * (layer + 1) + 1) * T
    cap = np.zeros((size, size))
    cap[:base, :base] = layered_capacity(enc)
    memory = np.arange(Le * S, base)  # the encoder's last layer
    positions = np.arange(T)
    previous = base + positions  # the decoder's inputs
    for i in range(layer + 1):
        after_self = base + (1 + 2 * i) * T + positions
        after_cross = after_self + T
        cap[np.ix_(previous, after_self)] = own[i].T  # (k, q): k flows to q
        cap[after_self, after_cross] = 0.5
        cap[np.ix_(memory, after_cross)] = 0.5 * _mean_cross(case.cross, i).T
        previous = after_cross
    return cap, int(previous[t])


def case_correlations(case: ErasureCase) -> pd.DataFrame:
    """Spearman's ρ of each method and layer with the case's erasure scores."""
    rows = []
    for layer in range(layers_of(case)):
        for method in METHODS:
            rho = spearman(importance(case, method, layer), case.erasure)
            rows.append({"method": method, "layer": layer, "spearman": rho})
    return pd.DataFrame(rows)


def head_correlations(cases: list[ErasureCase]) -> pd.DataFrame:
    """Per head, Spearman's ρ of its own attention row with erasure, averaged over cases:
    cross heads on an encoder-decoder, self-attention heads on a decoder."""
    first = cases[0]
    weights = first.cross if first.seq2seq else first.decoder_self
    assert weights is not None
    L, H = weights.shape[:2]
    kind = "cross" if first.seq2seq else "decoder_self"
    rho = np.full((len(cases), L, H), np.nan)
    for i, case in enumerate(cases):
        w = case.cross if case.seq2seq else case.decoder_self
        assert w is not None
        for layer in range(L):
            for head in range(H):
                rho[i, layer, head] = spearman(
                    w[layer, head, case.output_position].astype(np.float64), case.erasure
                )
    with np.errstate(all="ignore"):
        mean = np.nanmean(rho, axis=0) if len(cases) else rho[0]
    return pd.DataFrame(
        {
            "kind": kind,
            "layer": np.repeat(np.arange(L), H),
            "head": np.tile(np.arange(H), L),
            "spearman_erasure": mean.ravel(),
        }
    )


def correlation_table(
    per_case: list[pd.DataFrame], current: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Abnar & Zuidema's table, long: per method and layer, Spearman's ρ with erasure over the
    held-out cases (case_correlations of each: mean, standard deviation, how many had a
    defined ρ) and, when given, on the current input (`this_input`)."""
    columns = ["method", "layer", "spearman"]
    stacked = pd.concat(per_case) if per_case else pd.DataFrame(columns=columns)
    grouped = stacked.groupby(["method", "layer"], sort=False)["spearman"]
    table = pd.DataFrame(
        {"mean": grouped.mean(), "std": grouped.std(ddof=0), "cases": grouped.count()}
    ).reset_index()
    return with_current(table, current)


def with_current(table: pd.DataFrame, current: pd.DataFrame | None) -> pd.DataFrame:
    """The held-out table with the current input's ρ (case_correlations) as `this_input`,
    rows in METHODS order, then by layer."""
    if current is not None:
        mine = current.rename(columns={"spearman": "this_input"})
        table = table.drop(columns="this_input", errors="ignore")
        table = table.merge(mine, on=["method", "layer"], how="outer")
    rank = {m: i for i, m in enumerate(METHODS)}
    table = table.assign(_rank=table["method"].map(rank))
    return table.sort_values(["_rank", "layer"]).drop(columns="_rank").reset_index(drop=True)


def paper_table(table: pd.DataFrame, column: str = "mean") -> pd.DataFrame:
    """The long table pivoted as in the paper: a row per method, a column per layer, cells
    "ρ ± std" (held-out) or ρ (this input)."""
    cells = table.copy()
    if column == "mean":
        cells["cell"] = [
            f"{m:.2f} ± {s:.2f}" if np.isfinite(m) else "n/a"
            for m, s in zip(cells["mean"], cells["std"], strict=True)
        ]
    else:
        cells["cell"] = [f"{v:.2f}" if np.isfinite(v) else "n/a" for v in cells[column]]
    wide = cells.pivot(index="method", columns="layer", values="cell")
    wide = wide.reindex([m for m in METHODS if m in wide.index])
    wide.columns = [f"layer {c}" for c in wide.columns]
    return wide.reset_index()
