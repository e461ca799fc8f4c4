"""§3.2: our attention against torch's and against a recomputation from the layer's projections."""

from __future__ import annotations

import math

import pytest
import torch

from attnlens.model.net.attention import MultiHeadAttention, attention


def test_masked_entries_are_exactly_zero_and_rows_sum_to_one() -> None:
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 4, 5, 8).unbind(0)  # (B, h, T, d_k) each
    mask = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    _, w = attention(q, k, v, mask)
    assert torch.all(w.masked_select(~mask) == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 4, 5))


def test_attention_output_is_weighted_sum_of_values() -> None:
    torch.manual_seed(1)
    q, k, v = torch.randn(3, 1, 1, 3, 4).unbind(0)
    out, w = attention(q, k, v)
    expected = torch.softmax(q @ k.transpose(-2, -1) / 2.0, -1) @ v  # √d_k = 2
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(out, w @ v)


@pytest.mark.parametrize("masked", [False, True])
def test_multi_head_attention_matches_torch(masked: bool) -> None:
    torch.manual_seed(2)
    d_model, h, B, T, S = 16, 4, 2, 5, 7
    ours = MultiHeadAttention(d_model, h)
    ref = torch.nn.MultiheadAttention(d_model, h, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        ref.out_proj.weight.copy_(ours.w_o.weight)
        ref.out_proj.bias.copy_(ours.w_o.bias)
    x, memory = torch.randn(B, T, d_model), torch.randn(B, S, d_model)
    allowed = torch.ones(B, 1, S, dtype=torch.bool)
    if masked:
        allowed[1, 0, 4:] = False  # the second sequence has 3 padding positions
    attended = ours(x, ours.project_kv(memory), allowed)
    out, w = attended.output, attended.weights
    ref_out, ref_w = ref(
        x,
        memory,
        memory,
        key_padding_mask=~allowed[:, 0],
        need_weights=True,
        average_attn_weights=False,
    )
    torch.testing.assert_close(out, ref_out, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(w, ref_w, atol=1e-6, rtol=1e-5)


def test_head_mask_zeroes_one_heads_contribution() -> None:
    torch.manual_seed(3)
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8)
    kv = mha.project_kv(x)
    keep = torch.tensor([1.0, 0.0])
    out = mha(x, kv, None, keep).output
    q = mha.split_heads(mha.w_q(x))
    heads, _ = attention(q, *kv)
    heads[:, 1] = 0
    expected = mha.w_o(heads.transpose(1, 2).reshape(1, 3, 8))
    torch.testing.assert_close(out, expected)
    assert not torch.allclose(out, mha(x, kv).output)


def test_scores_are_scaled_by_sqrt_d_k() -> None:
    q = torch.ones(1, 1, 1, 4)
    k = torch.stack([torch.zeros(4), torch.ones(4)]).view(1, 1, 2, 4)
    _, w = attention(q, k, torch.zeros(1, 1, 2, 4))
    expected = torch.softmax(torch.tensor([0.0, 4.0 / math.sqrt(4)]), -1)
    torch.testing.assert_close(w.view(2), expected)
