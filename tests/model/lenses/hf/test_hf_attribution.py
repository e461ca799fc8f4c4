"""Direct logit attribution on Hugging Face decoders (hf/attribution.py): on every decoder of the
test zoo (21 causal LMs, Gemma 2's sandwich norms and soft cap included, and 8 encoder-decoders,
pre-norm and post-norm), the parts sum to the logit the unchanged model's own forward pass gives
(≤ 1e-4), at several positions, for the likeliest token and others, on random and on sharp
heads; a decode run's step reads back with its own log-probability; and what is not built as
stated (an unknown layout, a post-norm OPT, an unstated norm) is refused, saying why."""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from attnlens.model.lenses.hf.attribution import LAYOUTS, hf_attribution
from attnlens.model.lenses.hf.frozen import freeze
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.net.stream import Stream
from attnlens.record.attribution import LogitAttribution
from attnlens.record.errors import InputError
from helpers.hf_zoo import ZOO, variant, zoo_folder
from helpers.parts import runs
from helpers.sharp import sharp_hf_folder

CPU = torch.device("cpu")
TEXT = "the cat sat on the mat and the dog sat on the cat"
DECODERS = [n for n, s in ZOO.items() if s.architecture != "encoder"]


@functools.cache
def lens(name: str, folder: Path | None = None) -> HFLens:
    return HFLens(folder or zoo_folder(name), CPU, name=name)


def _case(hf: HFLens) -> tuple[list[int], list[int] | None]:
    """(decoder ids, source ids or None) of TEXT."""
    ids = list(runs(hf).token_ids(TEXT))
    if hf.info.architecture != "encoder-decoder":
        return ids, None
    return [hf.model.config.decoder_start_token_id, *ids[:6]], ids


def _own_logits(hf: HFLens, ids: list[int], source: list[int] | None) -> torch.Tensor:
    """(T, V) float64: the unchanged model's own logits, one plain forward pass."""
    with torch.inference_mode():
        if source is None:
            out = hf.model(input_ids=torch.tensor([ids]), use_cache=False)
        else:
            out = hf.model(input_ids=torch.tensor([source]),
                           decoder_input_ids=torch.tensor([ids]), use_cache=False)  # fmt: skip
    return out.logits[0].double()


def _attribute(hf: HFLens, ids: list[int], at: int, token: int, source: list[int] | None) -> Any:
    return hf_attribution(hf.model, hf.model.config.model_type, hf.info, ids, at, token,
                          {"model": hf.name, "token": str(token)}, source)  # fmt: skip


def _check(record: LogitAttribution, logits: torch.Tensor, token: int) -> None:
    """The parts sum to the model's own logit; under a soft cap c (Gemma 2), to the logit
    before it, z = c · atanh(logit / c)."""
    want = float(logits[token])
    assert abs(record.logit - want) <= 1e-4 * max(1.0, abs(want))
    if record.softcap is not None:
        want = record.softcap * math.atanh(want / record.softcap)
    assert abs(record.total - want) <= 1e-4 * max(1.0, abs(want)), (record.total, want)
    assert abs(record.logprob - float(torch.log_softmax(logits, 0)[token])) <= 1e-4


@pytest.mark.slow
@pytest.mark.parametrize("name", DECODERS)
def test_the_parts_sum_to_the_models_own_logit(name: str) -> None:
    hf = lens(name)
    ids, source = _case(hf)
    logits = _own_logits(hf, ids, source)
    for at in (0, len(ids) // 2, len(ids) - 1):
        for token in (int(logits[at].argmax()), int(logits[at].argmin()), 3):
            record = _attribute(hf, ids, at, token, source)
            _check(record, logits[at], token)
    L, H = hf.info.shape("decoder_self")
    assert record.heads["decoder_self"].shape == (L, H) and record.mlp.shape == (L,)
    assert ("cross" in record.heads) == (source is not None)


def test_every_decoder_of_the_zoo_has_a_stated_layout() -> None:
    assert {lens(n).model.config.model_type for n in DECODERS} <= set(LAYOUTS)
    assert LAYOUTS["bart"].post_norm is not None and LAYOUTS["llama"].post_norm is None


def test_gemma2s_parts_sum_to_its_logit_before_the_cap(tmp_path: Path) -> None:
    """Capped at 0.2, where tanh is far from the identity: the record's logit is the capped
    one, its parts sum to the one before the cap."""
    folder = variant("gemma2", tmp_path, {"final_logit_softcapping": 0.2}, {})
    hf = lens("gemma2-capped", folder)
    ids, _ = _case(hf)
    logits = _own_logits(hf, ids, None)
    token = int(logits[-1].argmax())
    record = _attribute(hf, ids, len(ids) - 1, token, None)
    assert record.softcap == 0.2 and "sandwich" in record.frozen
    assert record.uncapped is not None and abs(record.uncapped - record.logit) > 0.01
    _check(record, logits[-1], token)


@pytest.mark.parametrize(("name", "pattern"), [("llama", "q_proj"), ("gpt2", "c_attn")])
def test_sharp_heads_sum_to_the_logit_too(
    name: str, pattern: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = sharp_hf_folder(zoo_folder(name), tmp_path_factory.mktemp(name) / name, 3e4, pattern)
    hf = lens(f"sharp-{name}", folder)
    weights = hf.trace(TEXT).attention("decoder_self")
    assert weights is not None and (weights.max(-1) > 0.999).mean() > 0.5  # sharp
    ids, _ = _case(hf)
    logits = _own_logits(hf, ids, None)
    record = _attribute(hf, ids, len(ids) - 1, int(logits[-1].argmax()), None)
    _check(record, logits[-1], int(logits[-1].argmax()))


def test_a_decode_runs_step_reads_back_with_its_own_log_probability() -> None:
    hf = lens("llama")
    run = hf.decode("the cat sat", "beam", beam_size=2, max_len=5)
    vocab = hf.tokenizer.get_vocab()
    for step in range(len(run.steps)):
        for beam in run.steps[step].beams[:2]:
            keys = run.keys(step, beam.parent if step else 0)
            ids = [vocab[t] for t in keys]
            record = _attribute(hf, ids, len(ids) - 1, vocab[beam.token], None)
            assert abs(record.logprob - beam.logprob) <= 1e-4, (step, beam)


def test_an_unknown_layout_is_refused_naming_the_known_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(LAYOUTS, "llama")
    hf = lens("llama")
    with pytest.raises(InputError, match="does not know how the blocks of llama models add"):
        _attribute(hf, [1, 5, 6], 2, 4, None)


def test_a_post_norm_opt_is_refused_by_its_config() -> None:
    hf = lens("opt")
    hf.model.config.do_layer_norm_before = False
    try:
        with pytest.raises(InputError, match="normalises after each sublayer"):  # OPT-350m
            _attribute(hf, [1, 5, 6], 2, 4, None)
    finally:
        hf.model.config.do_layer_norm_before = True


class _Shifted(nn.Module):
    """A final norm attnlens cannot state: an RMSNorm that adds a constant it keeps no bias
    for."""

    def __init__(self, norm: nn.Module) -> None:
        super().__init__()
        self.norm, self.weight, self.eps = norm, norm.weight, 1e-6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.norm(x) + 0.3
        return out


def test_a_final_norm_that_is_no_layernorm_nor_rmsnorm_is_refused() -> None:
    norm = _Shifted(lens("llama").model.model.norm)
    x = torch.randn(16)
    stream = Stream(("embeddings",), x)
    with torch.inference_mode(), pytest.raises(InputError, match="neither a LayerNorm nor an"):
        freeze(stream, norm, norm(x.unsqueeze(0))[0], "final")


def test_a_post_norm_layer_not_built_as_stated_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stating BART's MLP wrong (its second linear left out) makes the walk miss the model's
    own next hidden state: refused, naming the layer."""
    from dataclasses import replace

    bart = LAYOUTS["bart"]
    assert bart.post_norm is not None
    wrong = replace(
        bart.post_norm, mlp=lambda layer, x: layer.activation_fn(layer.fc1(x))[..., :16]
    )
    monkeypatch.setitem(LAYOUTS, "bart", replace(bart, post_norm=wrong))
    hf = lens("bart")
    ids, source = _case(hf)
    with pytest.raises(InputError, match="layer 0's"):
        _attribute(hf, ids, len(ids) - 1, 3, source)


def test_a_prefix_whose_hidden_states_pass_the_budget_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The forward pass holds every layer's hidden states (and an eager-only model's weights):
    past the record budget, refused before it runs, naming the sizes and the setting."""
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "0.001")
    hf = lens("llama")
    ids, _ = _case(hf)
    with pytest.raises(InputError, match="ATTNLENS_MAX_RECORD_MB"):
        _attribute(hf, ids, len(ids) - 1, 3, None)
