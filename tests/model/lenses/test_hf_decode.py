"""HFLens.decode through the shared engine on the model's own cache, against model.generate.

Two references: a copy whose generation config has forced_eos_token_id switched off, compared
at length_penalty 0 (so the engine's plain search is checked step by step, every beam
finishing where the model puts its end token), and the model as saved, whose own generation
config (forced end token at max length, |Y|^1 length normalisation) the engine applies the way
generate does (tests/model/test_hf_generation.py has the processors one by one).
"""

from __future__ import annotations

import atexit
import copy
import functools
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers as T

from attnlens.model.lenses.hf.lens import HFLens
from attnlens.record.errors import InputError
from helpers.hf_models import reference, tiny_hf

TEXTS = ("the cat sat on the mat", "hello world", "a dog sat on a log")
GENERATORS = ("gpt2", "bart", "marian", "t5", "llama", "mistral")
MAX_LEN = 8


@functools.cache
def plain(kind: str) -> tuple[T.PreTrainedModel, T.PreTrainedTokenizerBase]:
    """The reference model without generate's forced end token (see the module docstring)."""
    model, tok = reference(kind)
    model = copy.deepcopy(model)
    model.generation_config.forced_eos_token_id = None
    return model, tok


@functools.cache
def eos_prone() -> Path:
    """Tiny Marian nudged towards its end token, so beams finish at different steps."""
    model, tok = plain("marian")
    model = copy.deepcopy(model)
    model.final_logits_bias[0, tok.eos_token_id] += 0.3
    folder = Path(tempfile.mkdtemp(prefix="attnlens-hf-eos-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@functools.cache
def banning() -> Path:
    """Tiny Marian whose generation config bans the token it would emit first (Marian bans its
    padding token this way), so generate and our engine must both skip it."""
    model, tok = plain("marian")
    model = copy.deepcopy(model)
    model.generation_config.bad_words_ids = [[FIRST_GREEDY_MARIAN]]
    folder = Path(tempfile.mkdtemp(prefix="attnlens-hf-ban-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


VARIANTS = {"marian-eos": eos_prone, "marian-ban": banning}
FIRST_GREEDY_MARIAN = 27  # what the tiny Marian emits first for every text in TEXTS


@functools.cache
def lens(kind: str) -> HFLens:
    folder = VARIANTS[kind]() if kind in VARIANTS else tiny_hf(kind)
    return HFLens(folder, torch.device("cpu"))


@functools.cache
def reference_model(kind: str) -> T.PreTrainedModel:
    if kind in VARIANTS:
        folder = VARIANTS[kind]()
        return T.AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager")
    return plain(kind)[0]


def generated(kind: str, text: str, beams: int) -> list[int]:
    """generate's output ids after the prompt (decoder-only) or the start token."""
    the_lens, model = lens(kind), reference_model(kind)
    source, prefix, _ = the_lens._decode_inputs(text)
    ids = torch.tensor([list(prefix if source is None else source)])
    extra = {"length_penalty": 0.0, "early_stopping": False} if beams > 1 else {}
    with torch.no_grad():
        out = model.generate(
            ids, attention_mask=torch.ones_like(ids), do_sample=False, num_beams=beams,
            max_new_tokens=MAX_LEN, **extra,
        )[0].tolist()  # fmt: skip
    return out[ids.size(1) :] if source is None else out[1:]


def aligned(kind: str, beams: int = 1) -> dict[str, object]:
    """Settings that line our run up with `plain`: the model's processors but the forced end
    token, and beam search without a length penalty."""
    own = lens(kind).decode_plan(TEXTS[0]).limits.generation_config
    settings: dict[str, object] = {
        "generation_config": {k: v for k, v in own.items() if k != "forced_eos_token_id"}
    }
    if beams > 1:
        settings["length_penalty"] = 0.0
    return settings


def our_ids(kind: str, tokens: tuple[str, ...]) -> list[int]:
    return [lens(kind).vocab_ids[t] for t in tokens]


@pytest.mark.parametrize("kind", [*GENERATORS, *VARIANTS])
@pytest.mark.parametrize("text", TEXTS)
def test_greedy_gives_generates_tokens(kind: str, text: str) -> None:
    run = lens(kind).decode(text, max_len=MAX_LEN, **aligned(kind))
    assert our_ids(kind, run.output_tokens) == generated(kind, text, 1)


@pytest.mark.parametrize("kind", [*GENERATORS, *VARIANTS])
@pytest.mark.parametrize("beams", [2, 4])
def test_beam_best_is_generates_best(kind: str, beams: int) -> None:
    for text in TEXTS:
        run = lens(kind).decode(
            text, strategy="beam", beam_size=beams, max_len=MAX_LEN, **aligned(kind, beams)
        )
        assert our_ids(kind, run.output_tokens) == generated(kind, text, beams), text


def test_beams_finish_at_different_steps_in_the_eos_prone_model() -> None:
    runs = [
        lens("marian-eos").decode(
            t, strategy="beam", beam_size=4, max_len=MAX_LEN, **aligned("marian-eos", 4)
        )
        for t in TEXTS
    ]
    finished = {h.step for run in runs for h in run.hypotheses if h.finished}
    assert len(finished) > 1


def teacher_forced(kind: str, text: str, out: list[int]) -> T.utils.ModelOutput:
    the_lens, model = lens(kind), reference_model(kind)
    source, prefix, _ = the_lens._decode_inputs(text)
    with torch.no_grad():
        if source is None:
            return model(torch.tensor([[*prefix, *out]]), output_attentions=True)
        return model(
            torch.tensor([list(source)]), decoder_input_ids=torch.tensor([[*prefix, *out]]),
            output_attentions=True,
        )  # fmt: skip


@pytest.mark.parametrize("kind", GENERATORS)
def test_scores_and_step_attention_equal_the_teacher_forced_pass(kind: str) -> None:
    text = TEXTS[0]
    run = lens(kind).decode(text, max_len=MAX_LEN)
    out = our_ids(kind, run.output_tokens)
    forced = teacher_forced(kind, text, out)
    source, prefix, _ = lens(kind)._decode_inputs(text)
    P = len(prefix)
    logprobs = torch.log_softmax(forced.logits[0].float(), -1)  # (P + n, V)
    rows = torch.arange(P - 1, P - 1 + len(out))
    expected = logprobs[rows, torch.tensor(out)]
    assert run.best.score == pytest.approx(float(expected.sum()), abs=1e-4)
    for step, want in zip(run.steps, expected.tolist(), strict=True):
        assert step.beams[0].logprob == pytest.approx(want, abs=1e-4)
    decoder_only = source is None
    own = forced.attentions if decoder_only else forced.decoder_attentions
    for t, step in enumerate(run.steps):
        row = torch.stack([a[0, :, P - 1 + t, : P + t] for a in own]).numpy()  # (L, H, P + t)
        np.testing.assert_allclose(step.decoder_self_attention[:, :, 0], row, atol=1e-5)
        if not decoder_only:
            cross = torch.stack([a[0, :, t] for a in forced.cross_attentions]).numpy()
            np.testing.assert_allclose(step.cross_attention[:, :, 0], cross, atol=1e-5)


def test_forcing_and_seeded_sampling() -> None:
    the_lens = lens("bart")
    forced = the_lens.decode(TEXTS[0], max_len=4, force={1: "Ġc"})
    assert forced.output_tokens[1] == "Ġc"
    one, two = (the_lens.decode(TEXTS[0], strategy="sample", seed=7, max_len=6) for _ in range(2))
    assert one.output_tokens == two.output_tokens and one.params["seed"] == 7


def test_ablation_changes_the_output_and_encoder_only_decoding_is_refused_clearly() -> None:
    plain = lens("bart").decode(TEXTS[0], max_len=3)
    ablated = lens("bart").decode(TEXTS[0], max_len=3, ablate=["0.1", "encoder:1.0"])
    assert ablated.params["ablate"] == ["cross:0.1", "encoder_self:1.0"]  # the older name, read
    assert ablated.best.score != pytest.approx(plain.best.score, abs=1e-7)
    with pytest.raises(InputError, match="does not exist"):
        lens("bart").decode(TEXTS[0], max_len=3, ablate=["cross:5.0"])
    with pytest.raises(InputError, match="encoder-only"):
        HFLens(tiny_hf("bert"), torch.device("cpu")).decode(TEXTS[0])


def test_a_second_identical_run_gives_the_identical_record() -> None:
    the_lens = lens("t5")
    first = the_lens.decode(TEXTS[1], strategy="beam", beam_size=3, max_len=MAX_LEN)
    again = the_lens.decode(TEXTS[1], strategy="beam", beam_size=3, max_len=MAX_LEN)
    assert first.to_json() == again.to_json()


def test_a_token_the_generation_config_bans_is_never_produced() -> None:
    plain_run = lens("marian").decode(TEXTS[0], max_len=MAX_LEN)
    assert our_ids("marian", plain_run.output_tokens)[0] == FIRST_GREEDY_MARIAN
    banned = lens("marian-ban").decode(TEXTS[0], strategy="beam", beam_size=4, max_len=MAX_LEN)
    assert FIRST_GREEDY_MARIAN not in our_ids("marian-ban", banned.output_tokens)
    top = banned.steps[0].candidates[0]
    assert lens("marian").names[FIRST_GREEDY_MARIAN] not in [c.token for c in top]


@pytest.mark.parametrize("kind", GENERATORS)
def test_output_tokens_spell_the_output_text(kind: str) -> None:
    """text_of (the app's "Output:" line) reads tokens as the tokenizer's own decode does."""
    run = lens(kind).decode(TEXTS[0], max_len=MAX_LEN)
    _, tok = plain(kind)
    want = tok.decode(our_ids(kind, run.output_tokens), skip_special_tokens=True)
    assert lens(kind).text_of(run.output_tokens) == run.output_text == want
