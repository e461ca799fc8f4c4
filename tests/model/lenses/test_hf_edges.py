"""The promise at the edges on Hugging Face models (issue 16), each on a tiny local model of
tests/helpers/hf_zoo.py: ids outside the vocabulary, local and per-layer masks, vocabulary
warnings, position schemes, encoder and decoder of different shapes, lossless read-back,
forcing past the end, sentence pairs, generation-config lengths, readable tokens."""

from __future__ import annotations

import atexit
import copy
import functools
import json
import math
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers as T

from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.hf.positions import SCHEME_NOTES
from attnlens.model.lenses.hf.windows import StackRules, stack_rules
from attnlens.record.errors import InputError
from helpers.hf_zoo import variant, zoo_folder, zoo_reference

CPU = torch.device("cpu")
TEXT = "the cat sat on the mat on the mat"


@functools.cache
def lens(name: str) -> HFLens:
    return HFLens(zoo_folder(name), CPU, name=name)


# 4. ids outside the vocabulary in a config are refused at load, in one line


@pytest.mark.parametrize(
    ("name", "key", "value"),
    [("gpt2", "eos_token_id", 50000), ("bart", "decoder_start_token_id", 999),
     ("t5", "eos_token_id", [1, 70000])],
)  # fmt: skip
def test_ids_outside_the_vocabulary_are_refused_at_load(
    name: str, key: str, value: object, tmp_path: Path
) -> None:
    """Before: trace died in a 79-94-line traceback, decode ran and never finished."""
    folder = variant(name, tmp_path, {key: value}, {key: value})
    bad = value[-1] if isinstance(value, list) else value
    with pytest.raises(InputError, match=rf"config's {key} is {bad}, outside the vocabulary"):
        HFLens(folder, CPU)


def test_ids_attnlens_never_uses_do_not_block_loading(tmp_path: Path) -> None:
    folder = variant("llama", tmp_path, {"pad_token_id": -1}, {"pad_token_id": -1})
    assert HFLens(folder, CPU).trace("hello world").decoder_self is not None
    folder = variant("bert", tmp_path, {"eos_token_id": 50282}, {})
    assert HFLens(folder, CPU).trace("hello world").encoder_self is not None  # generates nothing


# 5. the recorded mask is the one each layer applied


def test_gpt_neo_local_layers_are_in_the_recorded_masks() -> None:
    """Before: GPT-Neo's local layer was recorded as fully causal: allowed entries got 0."""
    tr = lens("gpt-neo").trace(TEXT)
    T_ = len(tr.tgt_tokens)
    i, j = np.indices((T_, T_))
    assert tr.layer_masks is not None and tr.decoder_self is not None
    assert np.array_equal(tr.mask("decoder_self", 0), j <= i)  # global
    assert np.array_equal(tr.mask("decoder_self", 1), (j <= i) & (i - j < 3))  # local, window 3
    assert np.array_equal(tr.mask("decoder_self"), j <= i)  # the union
    for layer in (0, 1):
        gets_weight = (tr.decoder_self[layer] > 0).any(axis=0)
        assert np.array_equal(gets_weight, tr.mask("decoder_self", layer))


def test_sliding_windows_on_some_layers_are_per_layer_masks() -> None:
    tr = lens("qwen2").trace(TEXT)  # max_window_layers=1: layer 0 full, layer 1 window 3
    T_ = len(tr.tgt_tokens)
    i, j = np.indices((T_, T_))
    assert np.array_equal(tr.mask("decoder_self", 0), j <= i)
    assert np.array_equal(tr.mask("decoder_self", 1), (j <= i) & (i - j < 3))
    assert tr.layer_masks is not None and lens("mistral").trace(TEXT).layer_masks is None


def test_a_mask_attnlens_cannot_derive_is_named_in_the_warnings() -> None:
    """Were GPT-Neo's local layers unknown, the zero weights they leave say so."""
    blind = copy.copy(lens("gpt-neo"))
    blind.runner = replace(lens("gpt-neo").runner, rules=StackRules())
    tr = blind.trace(TEXT)
    assert [w for w in tr.warnings if "decoder_self layer 1:" in w and "cannot derive" in w]
    assert not [w for w in tr.warnings if "layer 0:" in w]
    config = T.PretrainedConfig(layer_types=["full_attention", "mystery_attention"])
    assert stack_rules(config, 2).unknown() == [
        "layers 1 use 'mystery_attention' attention, whose mask attnlens cannot derive: their "
        "mask shows only causality and padding"
    ]


# 6. no false vocabulary warning; typed special tokens and real unknowns named


@pytest.mark.parametrize("name", ["gpt2", "gpt-neo", "bloom", "codegen"])
def test_a_prompt_inside_the_vocabulary_gets_no_vocabulary_warning(name: str) -> None:
    """Before: the start token GPT-2-style models prepend is also their unknown token."""
    tr = lens(name).trace("hello world")
    assert not [w for w in tr.warnings if "vocabulary" in w], tr.warnings
    assert not [w for w in lens(name).decode("hello world", max_len=2).warnings if "vocab" in w]


def test_unknown_pieces_and_typed_special_tokens_are_named() -> None:
    tr = lens("bert").trace("the 猫 sat [SEP] on the mat")
    assert "[UNK]" in tr.src_tokens
    assert "text outside the vocabulary was read as [UNK]: '猫'" in tr.warnings
    typed = [w for w in tr.warnings if "'[SEP]' typed in the text" in w]
    assert typed and "sentence pair" in typed[0]


# 7. the position scheme, and only an applied absolute table, as the model applied it


@pytest.mark.parametrize("name", ["roberta", "mpnet"])
def test_a_typed_pad_shifts_the_rows_roberta_style_tables_add(name: str) -> None:
    """Before: rows 0..S-1 were recorded while the model skipped the padding token."""
    model, tok = zoo_reference(name)
    text = "the cat <pad> sat on the mat"
    tr = lens(name).trace(text)
    ids = torch.tensor([tok(text)["input_ids"]])
    assert tok.pad_token_id in ids[0].tolist()
    emb = model.embeddings
    assert tr.positional_encoding is not None and tr.positional_scheme == "learned"
    with torch.no_grad():
        rows = torch.from_numpy(tr.positional_encoding)
        summed = emb.word_embeddings(ids) + rows
        if hasattr(emb, "token_type_embeddings"):
            summed = summed + emb.token_type_embeddings(torch.zeros_like(ids))
        rebuilt = emb.dropout(emb.LayerNorm(summed))
        np.testing.assert_allclose(rebuilt.numpy(), emb(input_ids=ids).numpy(), atol=1e-6)
    assert any("special token" in w and "'<pad>'" in w for w in tr.warnings)


def test_sinusoidal_buffers_are_found_and_are_the_rows_added() -> None:
    """Before: XGLM and M2M100 keep their sin/cos tables as buffers and got 'not found'."""
    xglm, _ = zoo_reference("xglm")
    tr = lens("xglm").trace(TEXT)
    T_ = len(tr.tgt_tokens)
    with torch.no_grad():
        want = xglm.model.embed_positions(torch.arange(T_)[None], 0)[0]
    assert tr.positional_scheme == "sinusoidal"
    np.testing.assert_allclose(tr.positional_encoding, want.numpy(), atol=1e-6)
    m2m, tok = zoo_reference("m2m100")
    tr = lens("m2m100").trace(TEXT, target="hello world")
    src = torch.tensor([tok.convert_tokens_to_ids(list(tr.src_tokens))])
    with torch.no_grad():
        want = m2m.model.encoder.embed_positions(src)[0]
    assert tr.positional_encoding is not None and tr.positional_scheme == "sinusoidal"
    np.testing.assert_allclose(tr.positional_encoding[: src.size(1)], want.numpy(), atol=1e-6)


@pytest.mark.parametrize(
    ("name", "scheme"),
    [("roformer", "rotary"), ("gptj", "rotary"), ("bloom", "alibi"), ("mpt", "alibi"),
     ("deberta-v2", "relative"), ("t5", "relative")],
)  # fmt: skip
def test_schemes_inside_attention_are_named_not_drawn_as_a_table(name: str, scheme: str) -> None:
    """Before: RoFormer's rotary sin/cos cache was recorded as an absolute table (5 × 8), and
    the others said only 'no absolute position table found'."""
    tr = lens(name).trace(TEXT)
    assert tr.positional_scheme == scheme and tr.positional_encoding is None
    assert SCHEME_NOTES[scheme] in tr.warnings


# 8. encoder and decoder of different shapes


def test_a_decoder_smaller_than_its_encoder_has_its_own_shape() -> None:
    info = lens("distilbart").info
    assert (info.n_layers, info.n_heads) == (3, 4)
    assert info.shape("decoder_self") == info.shape("cross") == (1, 2)
    tr = lens("distilbart").trace(TEXT)
    assert tr.encoder_self is not None and tr.encoder_self.shape[:2] == (3, 4)
    assert tr.cross is not None and tr.cross.shape[:2] == (1, 2)
    assert json.loads(tr.to_json())["model"]["decoder_layers"] == 1
    run = lens("distilbart").decode(TEXT, max_len=3)
    assert run.steps[0].cross_attention is not None
    assert run.steps[0].cross_attention.shape[:2] == (1, 2)


def test_a_t5_with_a_deeper_decoder_traces_and_decodes() -> None:
    """Before: `trace` without a target died in transformers' cache (IndexError)."""
    tr = lens("t5-deeper-decoder").trace(TEXT)
    assert tr.encoder_self is not None and tr.decoder_self is not None
    assert tr.encoder_self.shape[0] == 2 and tr.decoder_self.shape[0] == 3
    assert lens("t5-deeper-decoder").info.shape("cross") == (3, 2)
    run = lens("t5-deeper-decoder").decode(TEXT, "beam", beam_size=2, max_len=4)
    assert run.steps[0].decoder_self_attention.shape[0] == 3


# 9. lossless read-back from the record's tokens


@pytest.mark.parametrize("name", ["bart", "marian", "t5", "gpt2"])
def test_reading_back_the_output_tokens_gives_the_score(name: str) -> None:
    """Before: re-tokenizing the output text turned BART's '</s>' into '<s> </s>' and gave
    T5/Marian a leading '▁' (scores -4.90 vs -5.32, -11.24 vs -15.97)."""
    for strategy in ("greedy", "beam"):
        run = lens(name).decode(TEXT, strategy, beam_size=3, max_len=6)  # type: ignore[arg-type]
        tr = lens(name).trace(TEXT, target_tokens=run.output_tokens)
        fed = run.output_tokens[:-1] if run.best.finished else run.output_tokens
        assert tr.tgt_tokens[-len(fed) - 1 :] == (tr.tgt_tokens[-len(fed) - 1], *fed)
        assert tr.tgt_logprobs is not None
        generated = tr.tgt_logprobs[-len(run.output_tokens) :]
        if not run.best.finished:  # the last is the end token's, which was not generated
            generated = tr.tgt_logprobs[-len(run.output_tokens) - 1 : -1]
        assert math.isclose(float(generated.sum()), run.score, abs_tol=1e-4), (name, strategy)


def test_reading_back_a_run_that_ended_on_its_second_end_token(tmp_path: Path) -> None:
    folder = variant("gpt2", tmp_path, {}, {"eos_token_id": [0, 40]})
    chat = HFLens(folder, CPU)
    second = chat.names[40]
    run = chat.decode("hello world", force={0: second})
    assert run.output_tokens == (second,) and run.best.finished  # any end token ends it
    tr = chat.trace("hello world", target_tokens=run.output_tokens)
    assert tr.tgt_logprobs is not None
    assert math.isclose(float(tr.tgt_logprobs[-1]), run.score, abs_tol=1e-5)


# 10. a token forced after the output ended is named in the record


def test_forcing_after_the_end_warns_on_hugging_face_models() -> None:
    eot = lens("gpt2").names[lens("gpt2").ends[0]]
    run = lens("gpt2").decode("hello", max_len=6, force={0: eot, 3: "the"})
    assert run.output_tokens == (eot,)
    assert run.warnings == ("forced 'the' at step 3 was not used: the output ended after 1 step",)


# 11. sentence pairs


def test_a_sentence_pair_is_read_with_its_segment_ids() -> None:
    """Before: 'A [SEP] B' was read as one segment (token type 0 throughout)."""
    model, tok = zoo_reference("bert")
    a, b = "the cat sat", "a dog sat on a log"
    tr = lens("bert").trace(a, pair=b)
    enc = tok(a, b, return_token_type_ids=True)
    assert tr.src_tokens == tuple(tok.convert_ids_to_tokens(enc["input_ids"]))
    assert tr.src_segments == tuple(enc["token_type_ids"]) and 1 in tr.src_segments
    with torch.no_grad():
        own = model(
            input_ids=torch.tensor([enc["input_ids"]]),
            token_type_ids=torch.tensor([enc["token_type_ids"]]), output_attentions=True,
        ).attentions  # fmt: skip
    want = torch.stack([x[0] for x in own]).numpy()
    np.testing.assert_allclose(tr.encoder_self, want, atol=1e-6)  # type: ignore[arg-type]
    joined = lens("bert").trace(f"{a} [SEP] {b}")  # the same tokens as one segment
    assert joined.src_tokens == tr.src_tokens and joined.src_segments is None
    assert not np.allclose(joined.encoder_self, tr.encoder_self, atol=1e-4)  # type: ignore[arg-type]


def test_pairs_without_token_types_are_told_apart_by_their_separators() -> None:
    tr = lens("roberta").trace("the cat sat", pair="a dog")
    assert tr.src_segments is not None
    start = tr.src_segments.index(1)
    assert tr.src_tokens[start - 2 : start + 1] == ("</s>", "</s>", "a")
    assert lens("roberta").capabilities.reads_pairs and not lens("bart").capabilities.reads_pairs


def test_models_that_read_one_text_refuse_a_pair() -> None:
    with pytest.raises(InputError, match=r"reads one text.*encoder-decoder model"):
        lens("bart").trace(TEXT, pair="hello")
    with pytest.raises(InputError, match="reads one text"):
        lens("gpt2").trace(TEXT, pair="hello")
    with pytest.raises(InputError, match="second text is empty"):
        lens("bert").trace(TEXT, pair="  ")


# 3. a generation config's length and forced end token, as generate applies them


@functools.cache
def max_length_variant(name: str) -> Path:
    """Marian / Pegasus as shipped: the end token forced at a max_length of 6."""
    model, tok = zoo_reference(name)
    model = copy.deepcopy(model)
    model.generation_config.max_length = 6
    model.generation_config.forced_eos_token_id = tok.eos_token_id
    folder = Path(tempfile.mkdtemp(prefix=f"attnlens-maxlen-{name}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.mark.parametrize("name", ["marian", "pegasus"])
def test_the_end_forced_at_max_length_matches_generate_in_trace_and_decode(name: str) -> None:
    """Before: trace claimed a finished 15-token output where greedy gave 16."""
    model, tok = zoo_reference(name)
    model = copy.deepcopy(model)
    model.generation_config.max_length = 6
    model.generation_config.forced_eos_token_id = tok.eos_token_id
    forced = HFLens(max_length_variant(name), CPU)
    src = torch.tensor([tok(TEXT)["input_ids"]])
    with torch.no_grad():
        want = tok.convert_ids_to_tokens(model.generate(src, do_sample=False)[0].tolist())
    assert len(want) == 6 and want[-1] == tok.eos_token  # start + 4 + the forced end
    run = forced.decode(TEXT)
    assert list(run.prefix + run.output_tokens) == want and run.best.finished
    tr = forced.trace(TEXT)
    assert list(tr.tgt_tokens) == want[:-1]
    assert not [w for w in tr.warnings if "without the end token" in w]


# readable tokens in every Hugging Face record


def test_records_carry_readable_tokens_beside_the_models_own() -> None:
    tr = lens("gpt2").trace("hello  world")
    assert tr.tgt_shown is not None and len(tr.tgt_shown) == len(tr.tgt_tokens)
    assert any(t.startswith("Ġ") for t in tr.tgt_tokens)
    assert not any("Ġ" in t for t in tr.tgt_shown) and "␣" in tr.tgt_shown  # a space token
    tr = lens("t5").trace(TEXT, target="hello world")
    assert tr.src_shown is not None
    pairs = list(zip(tr.src_tokens, tr.src_shown, strict=True))
    assert ("▁ca", "ca") in pairs and ("▁", "␣") in pairs
    assert tr.shown("cross") == (tr.tgt_shown, tr.src_shown)


def test_a_wrapped_model_takes_pairs_and_target_tokens_too() -> None:
    import attnlens

    bert, bert_tok = zoo_reference("bert")
    tr = attnlens.wrap(bert, bert_tok).trace("the cat sat", pair="a dog")
    assert tr.src_segments == lens("bert").trace("the cat sat", pair="a dog").src_segments
    bart = attnlens.wrap(*zoo_reference("bart"))
    run = bart.decode(TEXT, max_len=4)
    back = bart.trace(TEXT, target_tokens=run.output_tokens)
    assert back.tgt_tokens[1:] == (
        run.output_tokens[:-1] if run.best.finished else run.output_tokens
    )
