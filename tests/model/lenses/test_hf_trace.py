"""HFLens.trace against the model's own output_attentions: same tensors, masks, tokens,
positions and teacher-forced log-probabilities, for BERT, GPT-2, BART, Marian and T5."""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.hf.positions import SCHEME_NOTES
from attnlens.record.errors import InputError
from attnlens.record.trace import Trace
from helpers.hf_models import KINDS, reference, tiny_hf

TEXT = "the cat sat on the mat on the mat"  # words twice: repeated tokens keep their own positions
TARGET = "hello world"
SEQ2SEQ = ("bart", "marian", "t5")


@functools.cache
def lens(kind: str) -> HFLens:
    return HFLens(tiny_hf(kind), torch.device("cpu"), name=f"tiny-{kind}")


def stacked(per_layer: tuple[torch.Tensor, ...]) -> np.ndarray:
    return torch.stack([a[0] for a in per_layer]).detach().numpy()


@functools.cache
def expected(kind: str) -> dict[str, object]:
    """What the reference model itself returns for TEXT (→ TARGET for encoder-decoders)."""
    model, tok = reference(kind)
    src = tok(TEXT)["input_ids"]
    with torch.no_grad():
        if kind == "bert":
            out = model(torch.tensor([src]), output_attentions=True)
            return {"src": src, "encoder_self": stacked(out.attentions)}
        if kind == "gpt2":
            ids = [tok.bos_token_id, *src]
            out = model(torch.tensor([ids]), output_attentions=True)
            nxt = [*ids[1:], tok.eos_token_id]
            return {
                "tgt": ids,
                "decoder_self": stacked(out.attentions),
                "logits": out.logits,
                "next": nxt,
            }
        labels = tok(text_target=TARGET)["input_ids"]  # ends with the end token
        dec = [model.config.decoder_start_token_id, *labels[:-1]]
        out = model(
            torch.tensor([src]), decoder_input_ids=torch.tensor([dec]), output_attentions=True
        )
    return {
        "src": src,
        "tgt": dec,
        "next": labels,
        "encoder_self": stacked(out.encoder_attentions),
        "decoder_self": stacked(out.decoder_attentions),
        "cross": stacked(out.cross_attentions),
        "logits": out.logits,
    }


@functools.cache
def traced(kind: str) -> Trace:
    return lens(kind).trace(TEXT, target=TARGET if kind in SEQ2SEQ else None)


@pytest.mark.parametrize("kind", KINDS)
def test_attention_is_exactly_the_models_own_output_attentions(kind: str) -> None:
    tr, want = traced(kind), expected(kind)
    kinds = [k for k in ("encoder_self", "decoder_self", "cross") if k in want]
    assert tr.kinds == tuple(kinds)
    for k in kinds:
        assert np.array_equal(tr.attention(k), want[k]), k  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", KINDS)
def test_tokens_are_the_tokenizers_own_strings_in_position(kind: str) -> None:
    tr, want = traced(kind), expected(kind)
    _, tok = reference(kind)
    if "src" in want and kind != "gpt2":
        assert tr.src_tokens == tuple(tok.convert_ids_to_tokens(want["src"]))
    if "tgt" in want:
        assert tr.tgt_tokens == tuple(tok.convert_ids_to_tokens(want["tgt"]))
    side = tr.tgt_tokens if kind == "gpt2" else tr.src_tokens
    assert len(side) > len(set(side)), "a repeated token keeps both positions"


@pytest.mark.parametrize("kind", KINDS)
def test_masks_line_up_and_masked_entries_are_exactly_zero(kind: str) -> None:
    tr = traced(kind)
    S, T = len(tr.src_tokens), len(tr.tgt_tokens)
    shapes = {"encoder_self": (S, S), "decoder_self": (T, T), "cross": (T, S)}
    for k in tr.kinds:
        weights, mask = tr.attention(k), tr.mask(k)
        assert weights is not None and mask is not None
        assert mask.shape == shapes[k] and weights.shape[2:] == shapes[k]
        assert weights.shape[:2] == (tr.model.n_layers, tr.model.n_heads)
        assert np.all(weights[..., ~mask] == 0.0), k
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    if tr.decoder_self_mask is not None:
        assert np.array_equal(tr.decoder_self_mask, np.tril(np.ones((T, T), dtype=bool)))


@pytest.mark.parametrize("kind", ["gpt2", *SEQ2SEQ])
def test_tgt_logprobs_are_the_teacher_forced_log_probabilities(kind: str) -> None:
    tr, want = traced(kind), expected(kind)
    logprobs = torch.log_softmax(want["logits"][0].float(), dim=-1)  # type: ignore[index]
    nxt = torch.tensor(want["next"])
    assert tr.tgt_logprobs is not None and tr.tgt_logprobs.shape == (len(tr.tgt_tokens),)
    np.testing.assert_allclose(tr.tgt_logprobs, logprobs[torch.arange(len(nxt)), nxt], atol=1e-6)
    _, tok = reference(kind)
    assert int(nxt[-1]) == tok.eos_token_id, "the last prediction is the end token"


def test_learned_absolute_positions_are_the_table_rows_used() -> None:
    bert, gpt2, bart = (reference(k)[0] for k in ("bert", "gpt2", "bart"))
    tr = traced("bert")
    S = len(tr.src_tokens)
    assert np.array_equal(
        tr.positional_encoding, bert.embeddings.position_embeddings.weight[:S].detach().numpy()
    )
    tr = traced("gpt2")
    T = len(tr.tgt_tokens)
    assert np.array_equal(tr.positional_encoding, gpt2.transformer.wpe.weight[:T].detach().numpy())
    tr = traced("bart")
    P = max(len(tr.src_tokens), len(tr.tgt_tokens))
    table = bart.model.encoder.embed_positions.weight  # BART skips its first 2 rows
    assert np.array_equal(tr.positional_encoding, table[2 : 2 + P].detach().numpy())
    assert any("model.decoder.embed_positions" in w for w in tr.warnings)


def test_sinusoidal_positions_shared_by_encoder_and_decoder_need_no_warning() -> None:
    tr = traced("marian")
    P = max(len(tr.src_tokens), len(tr.tgt_tokens))
    assert tr.positional_encoding is not None and tr.positional_encoding.shape == (P, 16)
    assert np.allclose(
        tr.positional_encoding[1, :2], [np.sin(1.0), np.sin(1.0 / 10000 ** (2 / 16))]
    )
    assert not [w for w in tr.warnings if "position" in w]


def test_relative_positions_are_not_faked() -> None:
    tr = traced("t5")
    assert tr.positional_encoding is None and tr.positional_scheme == "relative"
    assert SCHEME_NOTES["relative"] in tr.warnings


@pytest.mark.parametrize("kind", ["bart", "t5"])
def test_without_target_an_encoder_decoder_is_forced_on_its_greedy_output(kind: str) -> None:
    model, tok = reference(kind)
    tr = lens(kind).trace(TEXT)
    src = torch.tensor([tok(TEXT)["input_ids"]])
    new = lens(kind).default_new_tokens(src.size(1))
    with torch.no_grad():
        generated = model.generate(src, do_sample=False, num_beams=1, max_new_tokens=new)[0]
    assert tr.tgt_tokens == tuple(tok.convert_ids_to_tokens(generated[:-1].tolist()))
    assert tr.tgt_tokens[0] == tok.convert_ids_to_tokens(model.config.decoder_start_token_id)


@pytest.mark.parametrize("kind", KINDS)
def test_records_round_trip_through_json(kind: str) -> None:
    tr = traced(kind)
    assert Trace.from_json(tr.to_json()).equals(tr)
    assert tr.model.architecture == lens(kind).architecture


def test_bad_input_is_refused_with_the_limit_named() -> None:
    with pytest.raises(InputError, match="empty"):
        lens("bert").trace("   ")
    with pytest.raises(InputError, match="at most 40"):
        lens("bert").trace(" ".join(["cat"] * 60))
    with pytest.raises(InputError, match="encoder-only"):
        lens("bert").trace(TEXT, target="hello")


@pytest.mark.parametrize("kind", ["bert", "bart"])
def test_one_lens_serves_many_threads_with_the_same_records(kind: str) -> None:
    texts = [TEXT, "hello world", "a dog sat on a log", "the mat"] * 2
    alone = [lens(kind).trace(t) for t in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lens(kind).trace, texts))
    assert all(a.equals(b) for a, b in zip(alone, together, strict=True))


@pytest.mark.parametrize("kind", ["bert", "roberta"])
def test_the_position_rows_are_what_the_embeddings_added(kind: str) -> None:
    """Independent of how the table is found: LayerNorm(word + type + our rows) is the
    embedding layer's own output (RoBERTa's positions start after its padding row)."""
    model, tok = reference(kind)
    tr = lens(kind).trace(TEXT)
    ids = torch.tensor([tok(TEXT)["input_ids"]])
    emb = model.embeddings
    with torch.no_grad():
        summed = emb.word_embeddings(ids) + emb.token_type_embeddings(torch.zeros_like(ids))
        rebuilt = emb.LayerNorm(summed + torch.from_numpy(tr.positional_encoding))
        np.testing.assert_allclose(rebuilt.numpy(), emb(input_ids=ids).numpy(), atol=1e-6)
    rows = emb.position_embeddings.num_embeddings  # 40 (BERT), 42 (RoBERTa)
    offset = 0 if kind == "bert" else model.config.pad_token_id + 1
    assert lens(kind).max_tokens == rows - offset


@pytest.mark.parametrize("kind", ["llama", "mistral"])
def test_rotary_decoders_record_their_own_attention_and_no_position_table(kind: str) -> None:
    model, tok = reference(kind)
    tr = lens(kind).trace(TEXT)
    ids = torch.tensor([tok(TEXT)["input_ids"]])
    assert tr.tgt_tokens == tuple(tok.convert_ids_to_tokens(ids[0].tolist()))
    with torch.no_grad():
        own = stacked(model(ids, output_attentions=True).attentions)
    assert tr.model.architecture == "decoder" and np.array_equal(tr.decoder_self, own)
    assert tr.positional_encoding is None and tr.positional_scheme == "rotary"
    assert SCHEME_NOTES["rotary"] in tr.warnings


def test_a_sliding_window_is_part_of_the_mask_as_applied() -> None:
    tr = lens("mistral").trace(TEXT)
    T = len(tr.tgt_tokens)
    i, j = np.indices((T, T))
    assert np.array_equal(tr.decoder_self_mask, (j <= i) & (i - j < 3))
    assert tr.decoder_self is not None
    assert np.array_equal(tr.decoder_self_mask, (tr.decoder_self > 0).all(axis=(0, 1)))
