"""What each key a decoding step read gives each head (model/decoding/carried.py), at every step of
greedy and beam runs on our lm and translate and a Hugging Face Llama (grouped-query attention):
Σ_h Σⱼ αᵢⱼ f_h(xⱼ) + b_O, from the step's recorded weights and the cache's values through each
head's slice of W^O, equals the attention output W^O computed (a hook, in tests only); the
recorded norms are those vectors' norms, and those of a full-sequence trace of the same tokens;
sharp heads (scores of ±40 and more) too."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from attnlens.model.decoding.loop import Vocabulary, search
from attnlens.model.decoding.net_steppers import CausalStepper, TransformerStepper
from attnlens.model.decoding.request import DecodeSettings
from attnlens.model.decoding.stepper import StepOutput
from attnlens.model.lenses.hf.heads import output_weights
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.hf.step_norms import cache_values
from attnlens.model.lenses.hf.stepper import HFStepper
from attnlens.model.lenses.own import OwnLens
from attnlens.model.lenses.own_norms import attention_module
from attnlens.model.lenses.registry import load
from attnlens.record.decode import DecodeRun, StepRecord
from helpers.hf_zoo import zoo_folder
from helpers.sharp import SHARP, largest_score, sharp_hf_folder, sharpen

TOL = 1e-5
SETTINGS = (DecodeSettings("greedy", 8), DecodeSettings("beam", 8, beam_size=3))
PROMPT = "the cat sat on the mat"
WO = tuple[torch.Tensor, torch.Tensor | None]  # W^O (d_model, H·d) and its bias
Values = Callable[[Any], dict[str, list[torch.Tensor]]]  # a state's values per kind and layer


class Spy:
    """A Stepper that hands on another's outputs and keeps them, in order (tests only)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.outputs: list[StepOutput[Any]] = []

    def start(self, *args: Any) -> StepOutput[Any]:
        return self._kept(self.inner.start(*args))

    def step(self, state: Any, tokens: torch.Tensor) -> StepOutput[Any]:
        return self._kept(self.inner.step(state, tokens))

    def reorder(self, state: Any, index: torch.Tensor) -> Any:
        return self.inner.reorder(state, index)

    def _kept(self, out: StepOutput[Any]) -> StepOutput[Any]:
        self.outputs.append(out)
        return out


@contextmanager
def outputs_of(modules: dict[tuple[str, int], nn.Module]) -> Iterator[dict[Any, list[Any]]]:
    """Each W^O's output at its last position, one per feed (a hook, in tests only)."""
    seen: dict[Any, list[Any]] = {key: [] for key in modules}
    hooks = [
        m.register_forward_hook(lambda mod, i, o, key=key: seen[key].append(o[:, -1].detach()))
        for key, m in modules.items()
    ]
    try:
        yield seen
    finally:
        for hook in hooks:
            hook.remove()


def check_step(
    record: StepRecord, values: dict[str, list[torch.Tensor]], w_o: dict[Any, WO], computed: Any
) -> None:
    """One step's recorded norms and sums against W^O's own output (float64 sums)."""
    for kind, alpha, carried in (
        ("decoder_self", record.decoder_self_attention, record.decoder_self_carried),
        ("cross", record.cross_attention, record.cross_carried),
    ):
        if alpha is None:
            continue
        assert carried is not None and carried.shape == alpha.shape
        for layer, v in enumerate(values[kind]):
            weight, bias = w_o[kind, layer]
            H, B, K = alpha.shape[1:]
            v = v[:, :, -K:].double().expand(B, -1, -1, -1)  # (B, H_kv, K, d)
            d, group = v.size(-1), H // v.size(1)
            f = torch.stack(
                [v[:, h // group] @ weight[:, h * d : (h + 1) * d].double().T for h in range(H)],
                dim=1,
            )  # (B, H, K, d_model): f_h(x_j)
            norms = f.norm(dim=-1).permute(1, 0, 2).numpy()  # (H, B, K)
            gap = np.abs(carried[layer] - norms).max()
            assert gap <= TOL * max(1.0, norms.max()), (record.step, kind, layer, gap)
            a = torch.from_numpy(alpha[layer]).double().permute(1, 0, 2)  # (B, H, K)
            summed = torch.einsum("bhk,bhkd->bd", a, f)
            summed = summed if bias is None else summed + bias.double()
            out = computed[kind, layer][record.step].double()  # (B, d_model)
            gap = float((summed - out).abs().max())
            assert gap <= TOL * max(1.0, float(out.abs().max())), (record.step, kind, layer, gap)


def check_run(
    stepper: Any, modules: dict[Any, nn.Module], w_o: dict[Any, WO], values: Values,
    inputs: tuple[Sequence[int] | None, Sequence[int]], vocab: Any, settings: DecodeSettings,
) -> tuple[StepRecord, ...]:  # fmt: skip
    """Every step of a search through a spy, checked; the steps."""
    spy = Spy(stepper)
    with outputs_of(modules) as computed:
        steps, _ = search(spy, settings, inputs[0], inputs[1], vocab)
    assert len(steps) > 2
    for record in steps:
        check_step(record, values(spy.outputs[record.step].state), w_o, computed)
    return steps


def same_as_a_trace(lens: Any, text: str, run: DecodeRun) -> None:
    """Every step's norms, each row's, are those a trace of that row's tokens keeps."""
    for t, record in enumerate(run.steps):
        assert record.decoder_self_carried is not None
        for row in range(record.decoder_self_attention.shape[2]):
            keys = run.keys(t, row)
            given = keys[len(run.prefix) :]
            if not given:
                continue
            tr = lens.trace(text, target_tokens=given)
            want = tr.head_norms("decoder_self").carried[:, :, -len(keys) :]
            got = record.decoder_self_carried[:, :, row]
            assert np.abs(got - want).max() <= TOL * max(1.0, want.max()), (t, row)
            if record.cross_carried is not None:
                want = tr.head_norms("cross").carried
                got = record.cross_carried[:, :, row]
                assert np.abs(got - want).max() <= TOL * max(1.0, want.max()), (t, row)


@pytest.mark.parametrize("name", ["lm", "translate"])
@pytest.mark.parametrize("sharp", [False, True])
def test_each_steps_norms_sum_to_the_attention_output_on_our_models(name: str, sharp: bool) -> None:
    lens = load(name, "cpu")
    assert isinstance(lens, OwnLens)
    if sharp:  # queries × 30: scores of ±40 and more
        sharpen(lens.net, 30.0)
        scores = lens.trace(lens.example, record="scores").scores
        assert scores is not None and max(largest_score(s) for s in scores.values()) >= SHARP
    kinds = [k for k in ("decoder_self", "cross") if k in lens.info.kinds]
    modules = {(k, i): attention_module(lens.net, k, i).w_o  # type: ignore[arg-type]
               for k in kinds for i in range(lens.info.shape(k)[0])}  # fmt: skip
    w_o = {key: (m.weight.detach(), m.bias.detach()) for key, m in modules.items()}
    if "cross" in kinds:
        stepper: Any = TransformerStepper(lens.net, carried=True)  # type: ignore[arg-type]
        inputs = (lens.source_ids(lens.example)[0], [lens.tokenizer.bos_id])  # type: ignore[attr-defined]
    else:
        stepper = CausalStepper(lens.net, carried=True)  # type: ignore[arg-type]
        inputs = (None, lens.prompt(lens.example)[0])  # type: ignore[attr-defined]

    def values(state: Any) -> dict[str, list[torch.Tensor]]:
        out = {"decoder_self": [v for _, v in state.cache]}
        return out | ({"cross": [v for _, v in state.memory_kv]} if "cross" in kinds else {})

    for settings in SETTINGS:
        check_run(stepper, modules, w_o, values, inputs, lens.vocabulary(), settings)
        if not sharp:
            run = lens.decode(lens.example, settings.strategy, max_len=8,  # type: ignore[arg-type]
                              beam_size=settings.beam_size)  # fmt: skip
            assert run.has_norms and run.norms_missing is None
            same_as_a_trace(lens, lens.example, run)


def _hf_values(state: Any) -> dict[str, list[torch.Tensor]]:
    own, memory = cache_values(state.cache)
    return {"decoder_self": own} | ({} if memory is None else {"cross": memory})


@pytest.mark.parametrize("sharp", [False, True])
def test_each_steps_norms_sum_to_the_attention_output_on_a_hugging_face_llama(
    sharp: bool, tmp_path: Path
) -> None:
    """Llama with 2 key/value heads for 4 query heads: each query head reads its group's values
    through its own slice of W^O; the prompt's norms from the values its prefill received."""
    folder = zoo_folder("llama")
    lens = HFLens(folder, torch.device("cpu"), name="llama")
    if sharp:  # queries scaled until the largest score is 1.5 × SHARP
        base = lens.trace(PROMPT, record="scores").scores
        assert base is not None
        factor = 1.5 * SHARP / max(largest_score(s) for s in base.values())
        folder = sharp_hf_folder(folder, tmp_path / "sharp", factor, "q_proj")
        lens = HFLens(folder, torch.device("cpu"), name="llama")
    if sharp:
        scores = lens.trace(PROMPT, record="scores").scores
        assert scores is not None and max(largest_score(s) for s in scores.values()) >= SHARP
    found = output_weights(lens.model, "llama", lens.info)
    L = lens.info.n_layers
    modules = {("decoder_self", i): found.modules["decoder_self", i] for i in range(L)}
    w_o = {key: (found.weight(*key), found.bias(*key)) for key in modules}  # type: ignore[arg-type]
    _, prefix, _ = lens._decode_inputs(PROMPT)
    stepper = HFStepper(lens.model, "decoder", lens.projections, carried=True)
    vocab = Vocabulary(lens.names, lens.ends[0], lens._detokenize, (), (), lens.ends[1:])
    for settings in SETTINGS:
        check_run(stepper, modules, w_o, _hf_values, (None, prefix), vocab, settings)
        run = lens.decode(PROMPT, settings.strategy, max_len=8,  # type: ignore[arg-type]
                          beam_size=settings.beam_size)  # fmt: skip
        assert run.has_norms and run.norms_missing is None
        if not sharp:
            same_as_a_trace(lens, PROMPT, run)
