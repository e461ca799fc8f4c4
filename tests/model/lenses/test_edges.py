"""The promise at the edges on our own models: typed special tokens, lossless read-back, forcing
past the end, sentence pairs refused, the position scheme stated (issue 16)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from attnlens import InputError, load
from attnlens.model.lenses.lens import Lens

TYPED = "the <pad> cat sees a house"


@pytest.fixture(scope="module")
def translate() -> Lens:
    return load("translate", device="cpu")


def test_typed_special_tokens_never_become_special_ids(translate: Lens) -> None:
    """Before: "<pad>" became the padding id, masked by trace and attended to by decode, so
    the decode score (-1.971) and the read-back sum (-1.610) differed."""
    run = translate.decode(TYPED)
    tr = translate.trace(TYPED, target=run.output_text)
    assert tr.src_tokens[:3] == ("the", "<unk>", "cat") and "<pad>" not in tr.src_tokens
    for warnings in (tr.warnings, run.warnings):
        assert any("'<pad>'" in w and "special token" in w for w in warnings), warnings
    assert tr.encoder_self_mask is not None and tr.encoder_self_mask.all()
    assert tr.tgt_logprobs is not None and run.best.finished
    assert math.isclose(float(tr.tgt_logprobs.sum()), run.score, abs_tol=1e-4)
    assert tr.cross is not None
    for t, step in enumerate(run.steps):
        assert step.cross_attention is not None
        np.testing.assert_allclose(step.cross_attention[:, :, 0], tr.cross[:, :, t], atol=1e-5)


def test_each_special_name_typed_is_read_as_unk(translate: Lens) -> None:
    tr = translate.trace("<s> cat </s> <unk> house", target="<pad> gat")
    assert tr.src_tokens == ("<unk>", "cat", "<unk>", "<unk>", "house", "</s>")
    assert tr.tgt_tokens == ("<s>", "<unk>", "gat")
    assert any("'<s>', '</s>', '<unk>' typed" in w for w in tr.warnings)
    assert any(w.startswith("target: '<pad>'") for w in tr.warnings)
    assert not any("outside the vocabulary" in w for w in tr.warnings)


def test_read_back_from_the_records_tokens_is_exact(translate: Lens) -> None:
    """target_tokens takes a decode record's output_tokens as they are, forced specials too."""
    run = translate.decode("the cat sees a house", "beam", beam_size=3, force={1: "<unk>"})
    assert run.output_tokens[1] == "<unk>"
    tr = translate.trace("the cat sees a house", target_tokens=run.output_tokens)
    assert tr.tgt_tokens == ("<s>", *run.output_tokens[:-1])
    assert tr.tgt_logprobs is not None and run.best.finished
    # forcing replaced the model's choice at step 1, so its log p is the forced token's own
    assert math.isclose(float(tr.tgt_logprobs.sum()), run.score, abs_tol=1e-4)
    with pytest.raises(InputError, match="'zzz' is not in translate's vocabulary"):
        translate.trace("the cat", target_tokens=["lo", "zzz"])
    with pytest.raises(InputError, match="not both"):
        translate.trace("the cat", target="lo", target_tokens=["lo"])


def test_lm_reads_back_its_continuation_from_tokens(lm: Lens) -> None:
    run = lm.decode("abc", max_len=6)
    tr = lm.trace("abc", target_tokens=run.output_tokens)
    fed = run.output_tokens[:-1] if run.best.finished else run.output_tokens
    assert tr.tgt_tokens == ("<s>", "a", "b", "c", *fed)
    assert tr.tgt_logprobs is not None
    generated = tr.tgt_logprobs[3:] if run.best.finished else tr.tgt_logprobs[3:-1]
    assert math.isclose(float(generated.sum()), run.score, abs_tol=1e-4)


def test_a_token_forced_after_the_output_ended_is_named_in_the_warnings() -> None:
    lens = load("reverse", device="cpu")
    run = lens.decode("ab", force={5: "x"})
    assert run.output_tokens == ("b", "a", "</s>")
    assert run.warnings == ("forced 'x' at step 5 was not used: the output ended after 3 steps",)
    assert lens.decode("ab", force={1: "x"}).warnings == ()
    again = lens.decode("ab", run.strategy, **run.params)
    assert again.warnings == run.warnings  # the replay says it too


def test_our_models_refuse_pairs_and_state_their_sinusoids(tiny_model_dir: Path, lm: Lens) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    with pytest.raises(InputError, match=r"reads one text: sentence pairs .* BERT"):
        lens.trace("abc", pair="def")
    with pytest.raises(InputError, match="reads one text"):
        lm.trace("abc", pair="def")
    assert lens.trace("abc").positional_scheme == "sinusoidal"
    assert lm.trace("abc").positional_scheme == "sinusoidal"
