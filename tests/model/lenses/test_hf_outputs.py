"""attnlens.from_hf: a Trace from the attention a tiny BERT, GPT-2 and BART computed in memory,
equal to their outputs, drawn by every view that applies; shapes and weights checked with
messages that say what to pass."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import transformers as T

import attnlens
from attnlens.record.errors import InputError
from attnlens.record.trace import Kind, Trace
from helpers.hf_models import in_memory

TEXT = "the cat sat on the mat"


Run = tuple[T.PreTrainedModel, Any, Any, list[str], list[str] | None]


def run(kind: str, text: str = TEXT) -> Run:
    """(model, tokenizer, outputs, tokens, decoder tokens) of one eager forward pass."""
    model, tok = in_memory(kind)
    model.set_attn_implementation("eager")
    model.eval()
    enc = tok(text, return_tensors="pt")
    tokens = tok.convert_ids_to_tokens(enc["input_ids"][0])
    extra, tgt = {}, None
    if kind == "bart":
        extra["decoder_input_ids"] = enc["input_ids"][:, :5]
        tgt = tokens[:5]
    with torch.no_grad():
        out = model(**enc, **extra, output_attentions=True)
    return model, tok, out, tokens, tgt


def stacked(per_layer: Any) -> np.ndarray:
    return torch.stack([a[0] for a in per_layer]).numpy()


def draw_every_view(trace: Trace) -> int:
    """Every figure that applies to the record, each checked on its data; returns how many."""
    drawn = 0
    for kind in trace.kinds:
        weights = trace.attention(kind)
        assert weights is not None
        L, H = weights.shape[:2]
        heat = attnlens.head_heatmap(trace, kind, L - 1, H - 1)
        held = np.nan_to_num(heat.data[0].customdata)  # the weights, for the hover
        np.testing.assert_allclose(held, weights[L - 1, H - 1], atol=1e-7)
        drawn_z = np.nan_to_num(heat.data[0].z)  # the colour: ∛weight, the default scale
        # the perceptual scale colours by the cube root of the weight (viz/heads/colour_scale.py)
        np.testing.assert_allclose(drawn_z, np.cbrt(np.clip(held, 0, 1)), atol=1e-6)
        thumbs = attnlens.model_view(trace, kind)
        assert thumbs.data[0].type == "heatmap" and len(thumbs.data[1].x) == L * H  # a tile each
        lines = attnlens.lines_view(trace, kind, 0)
        assert lines.data
        masks = attnlens.masks_view(trace, kind)
        assert masks.data
        drawn += 4
        if kind != "cross":
            n = weights.shape[-1]
            rollout = np.asarray(attnlens.rollout_view(trace, kind).data[0].z)
            np.testing.assert_allclose(np.nansum(rollout, -1), 1.0, atol=1e-4)  # a row: a share
            flow = np.asarray(attnlens.rollout_view(trace, kind, "flow").data[0].z)
            assert rollout.shape == flow.shape == (n, n)
            drawn += 2
    if "cross" in trace.kinds:
        assert attnlens.cross_alignment(trace).data
        drawn += 1
    stats = attnlens.head_statistics(trace)
    assert set(stats["kind"]) == set(trace.kinds)
    for kind in trace.kinds:
        assert attnlens.head_stats_chart(stats, kind).data
        drawn += 1
    with pytest.raises(ValueError, match="records no positional encoding"):
        attnlens.positional_view(trace)  # the outputs carry no position table: not applicable
    return drawn


EXPECTED: dict[str, tuple[str, dict[str, str]]] = {
    "bert": ("encoder", {"encoder_self": "attentions"}),
    "gpt2": ("decoder", {"decoder_self": "attentions"}),
    "bart": ("encoder-decoder", {"encoder_self": "encoder_attentions",
             "decoder_self": "decoder_attentions", "cross": "cross_attentions"}),
}  # fmt: skip


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_a_trace_from_raw_outputs_holds_them_and_draws_every_view(kind: str) -> None:
    _, _, out, tokens, tgt = run(kind)
    trace = attnlens.from_hf(out, tokens, tgt, name=f"tiny {kind}")
    architecture, fields = EXPECTED[kind]
    assert trace.model.architecture == architecture
    assert set(trace.kinds) == set(fields)
    for name, field in fields.items():
        np.testing.assert_array_equal(trace.attention(name), stacked(out[field]))  # type: ignore[arg-type]
    if kind == "gpt2":
        assert trace.tgt_tokens == tuple(tokens) and trace.src_tokens == ()
        np.testing.assert_array_equal(trace.decoder_self_mask, np.tril(np.ones((7, 7), bool)))
        assert trace.tgt_shown is not None and "Ġ" not in "".join(trace.tgt_shown)
    else:
        assert trace.src_tokens == tuple(tokens)
    assert draw_every_view(trace) >= 6
    assert Trace.from_json(trace.to_json()).equals(trace)


def test_bertviz_style_attentions_alone_and_numpy_arrays_give_the_same_trace() -> None:
    _, _, out, tokens, _ = run("gpt2")
    whole = attnlens.from_hf(out, tokens)
    alone = attnlens.from_hf(out.attentions, tokens)
    arrays = attnlens.from_hf([a.numpy() for a in out.attentions], tokens)
    assert alone.equals(whole) and arrays.equals(whole)
    assert alone.model.architecture == "decoder"  # read off the weights: nothing above the diagonal
    as_encoder = attnlens.from_hf(out.attentions, tokens, architecture="encoder")
    assert as_encoder.kinds == ("encoder_self",)


def test_tensors_with_grad_and_in_half_precision_are_read() -> None:
    model, tok = in_memory("bert")
    model.set_attn_implementation("eager")
    model.eval()
    enc = tok(TEXT, return_tensors="pt")
    tokens = tok.convert_ids_to_tokens(enc["input_ids"][0])
    out = model(**enc, output_attentions=True)  # no torch.no_grad(): tensors require grad
    assert out.attentions[0].requires_grad
    trace = attnlens.from_hf(out, tokens)
    np.testing.assert_array_equal(trace.encoder_self, stacked([a.detach() for a in out.attentions]))
    half = [a.detach().to(torch.bfloat16) for a in out.attentions]
    assert attnlens.from_hf(half, tokens).encoder_self.dtype == np.float32  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", ("bert", "gpt2"))
def test_one_sequence_of_a_padded_batch_equals_it_run_alone(kind: str) -> None:
    model, tok = in_memory(kind)
    model.set_attn_implementation("eager")
    model.eval()
    texts = ["the cat", TEXT]
    batch = tok(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model(**batch, output_attentions=True)
    padded = tok.convert_ids_to_tokens(batch["input_ids"][0])
    trace = attnlens.from_hf(out, padded, index=0, attention_mask=batch["attention_mask"])
    _, _, alone_out, alone_tokens, _ = run(kind, "the cat")
    alone = attnlens.from_hf(alone_out, alone_tokens)
    kind_name = alone.kinds[0]
    assert trace.kinds == alone.kinds and trace.tokens(kind_name) == alone.tokens(kind_name)
    np.testing.assert_allclose(trace.attention(kind_name), alone.attention(kind_name), atol=1e-6)
    dropped = len(padded) - len(alone_tokens)
    assert trace.warnings == (f"{dropped} padding positions dropped (attention_mask)",)
    with pytest.raises(InputError, match=r"batch of 2 sequences; pass index= \(0-1\)"):
        attnlens.from_hf(out, padded)
    with pytest.raises(InputError, match=r"index 2 is outside the batch of 2 \(0-1\)"):
        attnlens.from_hf(out, padded, index=2)


def test_bad_shapes_and_values_are_refused_with_what_to_pass() -> None:
    model, tok, out, tokens, _ = run("bert")
    att = [a.numpy() for a in out.attentions]
    n = len(tokens)
    cases: list[tuple[Any, Any, dict[str, Any], str]] = [
        (out, tokens[:-1], {}, f"attention covers {n} positions but {n - 1} tokens were given"),
        (out, "the cat", {}, "list of token strings, one per position"),
        (out, list(range(n)), {}, r"must be strings: use tokenizer.convert_ids_to_tokens"),
        ([a[0] for a in att], tokens, {}, r"layer 0 has shape \(2, 8, 8\); .* \(batch, heads"),
        ([att[0], att[1][:, :1]], tokens, {}, r"layer 1 has shape \(1, 1, 8, 8\) but layer 0"),
        ([a * 2 for a in att], tokens, {}, "sum to 2.0000, not 1; pass attention weights after"),
        (att, tokens, {"architecture": "decoder"}, "not causal attention; pass architecture="),
        (out, tokens, {"attention_mask": np.ones(3)}, r"attention_mask has shape \(3,\)"),
        ("attention", tokens, {}, "not a str"),
    ]
    for outputs, given, options, message in cases:
        with pytest.raises(InputError, match=message):
            attnlens.from_hf(outputs, given, **options)
    with torch.no_grad():
        plain = model(**tok(TEXT, return_tensors="pt"))  # output_attentions not asked for
    with pytest.raises(InputError, match="no attention weights: run the model with output_att"):
        attnlens.from_hf(plain, tokens)


def test_an_encoder_decoder_needs_its_decoder_tokens_and_matching_cross_attention() -> None:
    _, _, out, tokens, tgt = run("bart")
    assert tgt is not None
    with pytest.raises(InputError, match="need tgt_tokens too"):
        attnlens.from_hf(out, tokens)
    with pytest.raises(InputError, match="decoder attention covers 5 positions but 4 tgt_tokens"):
        attnlens.from_hf(out, tokens, tgt[:-1])
    with pytest.raises(InputError, match="encoder-decoder's outputs, not an encoder's"):
        attnlens.from_hf(out, tokens, tgt, architecture="encoder")
    kinds: tuple[Kind, ...] = attnlens.from_hf(out, tokens, tgt).kinds
    assert kinds == ("encoder_self", "decoder_self", "cross")
