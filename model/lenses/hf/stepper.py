"""The decoding Stepper of a Hugging Face model, on the model's own key/value cache.

The search's state must never change once handed out (`reorder` and `step` return new states),
but transformers' Cache objects grow in place. So each feed and each reorder works on a copy of
the state's cache; the copy keeps every counter the cache class tracks (a sliding-window layer
remembers how many positions it has seen, which sets the next rotary position), so nothing is
rebuilt by hand. Copying costs about what the cache's own concatenation costs per step.

Ablated heads are zeroed in a private copy of the model made once per run (`ablation.py`); the
run's states carry it, so the stepper itself stays shared and unchanged.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from transformers import Cache, PreTrainedModel
from transformers.modeling_outputs import BaseModelOutput

from attnlens.model.decoding.carried import CarriedNorms
from attnlens.model.decoding.heads import HeadRef
from attnlens.model.decoding.stepper import StepOutput
from attnlens.model.lenses.hf.ablation import OutputProjections
from attnlens.model.lenses.hf.capture import (
    CAPTURE,
    CAPTURE_HEADS,
    CapturedHeads,
    HeldHeads,
    UnexpressibleError,
)
from attnlens.model.lenses.hf.step_norms import cache_values, fed_values, run_norms
from attnlens.model.lenses.hf.tracing import stacked
from attnlens.model.lenses.hf.twin import kernel_twin
from attnlens.record.errors import InputError
from attnlens.record.scores import LayerScores
from attnlens.record.trace import Architecture


@dataclass(frozen=True)
class HFState:
    """What the next step needs: the model of this run (the shared one, or a private copy with
    heads ablated), the cache (never changed once here) and, for an encoder-decoder, the
    memory."""

    model: PreTrainedModel
    cache: Cache | None  # None before the first feed
    memory: torch.Tensor | None  # (B, S, d_model): the encoder output, None for decoder-only
    src_mask: torch.Tensor | None  # (B, S)
    fed: int = 0  # decoder positions fed so far
    norms: CarriedNorms | None = None  # what the keys give each head, when asked for


class HFStepper:
    """Decodes a Hugging Face encoder-decoder or decoder-only model one position at a time,
    with the model's own log-probabilities and logits (its generation config's processors
    run in the loop); carried: each step also returns what its keys give each head, read from
    the values in the cache (hf/step_norms.py), where the model's W^O can be found."""

    def __init__(
        self,
        model: PreTrainedModel,
        architecture: Architecture,
        projections: OutputProjections,
        carried: bool = False,
    ) -> None:
        if architecture == "encoder":
            raise InputError("an encoder-only model does not generate text")
        self.model, self.architecture, self.projections = model, architecture, projections
        self.carried = carried

    @property
    def device(self) -> torch.device:
        weight: torch.Tensor = next(self.model.parameters())
        return weight.device

    @torch.inference_mode()
    def start(
        self, source: Sequence[int] | None, prefix: Sequence[int], ablate: Sequence[HeadRef] = ()
    ) -> StepOutput[HFState]:
        """Run the encoder once on source (encoder-decoder), then feed prefix; B = 1. Ablated
        heads are zeroed for the whole run, in a copy of the model the run's states hold."""
        model = self.projections.without(self.model, ablate)
        memory = src_mask = None
        if self.architecture == "encoder-decoder":
            if source is None:
                raise InputError("an encoder-decoder model needs a source")
            src = torch.tensor([list(source)], dtype=torch.long, device=self.device)  # (1, S)
            src_mask = torch.ones_like(src)  # (1, S)
            encoder = model.get_encoder()
            memory = encoder(input_ids=src, attention_mask=src_mask).last_hidden_state
        first = torch.tensor([list(prefix)], dtype=torch.long, device=self.device)  # (1, P)
        norms = run_norms(model, self.projections.info)[0] if self.carried else None
        return self._feed(HFState(model, None, memory, src_mask, 0, norms), first)

    @torch.inference_mode()
    def step(self, state: HFState, tokens: torch.Tensor) -> StepOutput[HFState]:
        """Feed one token per hypothesis, tokens (B,)."""
        return self._feed(state, tokens.unsqueeze(1))  # (B, 1)

    def reorder(self, state: HFState, index: torch.Tensor) -> HFState:
        """The hypotheses index (B',) picks: rows of a copy of the cache and of the memory."""
        cache = copy.deepcopy(state.cache)
        if cache is not None:
            cache.reorder_cache(index)  # type: ignore[arg-type]  # any integer tensor works
        return HFState(
            state.model,
            cache,
            None if state.memory is None else state.memory.index_select(0, index),
            None if state.src_mask is None else state.src_mask.index_select(0, index),
            state.fed,
            None if state.norms is None else state.norms.rows(index),
        )

    def _feed(self, state: HFState, new: torch.Tensor) -> StepOutput[HFState]:
        """Run the decoder on new (B, n) after the cached positions; read off the last one."""
        if self.architecture == "decoder" and new.size(1) > 1 and state.cache is None:
            prefilled = _prefill(state, new)
            if prefilled is not None:
                return prefilled
        if self.architecture == "encoder-decoder":
            out = state.model(
                encoder_outputs=BaseModelOutput(last_hidden_state=state.memory),
                attention_mask=state.src_mask,
                decoder_input_ids=new,
                past_key_values=copy.deepcopy(state.cache),
                use_cache=True,
                output_attentions=True,
                **last_logits_only(state.model),
            )
            own, cross = out.decoder_attentions, out.cross_attentions
        else:
            out = state.model(
                input_ids=new,
                past_key_values=copy.deepcopy(state.cache),
                use_cache=True,
                output_attentions=True,
                **last_logits_only(state.model),
            )
            own, cross = out.attentions, None
        logits = out.logits[:, -1].float()  # (B, V): generate's greedy processes these
        log_probs = torch.log_softmax(logits, dim=-1)  # (B, V)
        fed = state.fed + new.size(1)
        self_attention = torch.stack([_row(a, fed) for a in own])  # (L, B, H, fed)
        cross_attention = None if cross is None else torch.stack([a[:, :, -1] for a in cross])
        norms = _grown(state.norms, out.past_key_values, new.size(1))
        after = HFState(state.model, out.past_key_values, state.memory, state.src_mask, fed, norms)
        carried = (None, None) if norms is None else norms.of_rows(new.size(0))
        return StepOutput(log_probs, self_attention, cross_attention, after, logits, *carried)


def _grown(norms: CarriedNorms | None, cache: Cache, n: int) -> CarriedNorms | None:
    """The norms with the n newest keys' (and on the first feed, the memory's); None where the
    cache's values cannot be read (the run goes on without norms)."""
    if norms is None:
        return None
    try:
        own, memory = cache_values(cache)
        if memory is not None and norms.cross is None:
            norms = norms.with_memory(memory)
        return norms.grown(fed_values(own, n))
    except ValueError:
        return None


def _prefill(state: HFState, new: torch.Tensor) -> StepOutput[HFState] | None:
    """A decoder-only prompt fed whole (B = 1), through the kernel with the attention captured
    (record/scores.py): each layer's last row rebuilt exactly from what the kernel computed it
    from, where the eager model would build every head's P × P to keep that one row. None
    where the model's attention cannot be captured (the eager feed then runs)."""
    try:
        heads = CAPTURE_HEADS if state.norms is not None else CAPTURE  # with the values
        out = kernel_twin(state.model, heads)(
            input_ids=new,
            past_key_values=None,
            use_cache=True,
            output_attentions=True,
            **last_logits_only(state.model),
        )
        layers = stacked(out.attentions, scores=True)
    except UnexpressibleError:
        return None
    rows = [_last_row(layer) for layer in layers]  # (1, H, P) each
    logits = out.logits[:, -1].float()  # (1, V)
    fed = state.fed + new.size(1)
    self_attention = torch.stack([torch.nn.functional.pad(r, (fed - r.size(-1), 0)) for r in rows])
    norms = state.norms  # every prompt position's values as the calls received them
    if norms is not None:
        norms = norms.grown([_held(x).values.unsqueeze(0) for x in out.attentions])
    after = HFState(state.model, out.past_key_values, None, None, fed, norms)
    own = None if norms is None else norms.of_rows(1)[0]
    log_probs = torch.log_softmax(logits, dim=-1)
    return StepOutput(log_probs, self_attention, None, after, logits, own)


def _held(layer: CapturedHeads) -> HeldHeads:
    """What a prefill's layer held (it takes no norms in the call: a step takes its own)."""
    assert isinstance(layer.heads, HeldHeads), "a prefill hands its calls no norms to take"
    return layer.heads


def last_logits_only(model: PreTrainedModel) -> dict[str, int]:
    """logits_to_keep=1 where the model's forward takes it: a step reads the last position's
    logits only, and the output layer would otherwise make every position's, P × V for a
    prompt (8,192 × 128,256 on Llama-3.2's vocabulary: 4.2 GB of float32)."""
    takes = "logits_to_keep" in inspect.signature(model.forward).parameters
    return {"logits_to_keep": 1} if takes else {}


def _last_row(layer: LayerScores) -> torch.Tensor:
    """(1, H, K): every head's last query row, exact from the captured layer."""
    H, Q, _ = layer.shape
    last = slice(Q - 1, Q)
    return torch.from_numpy(np.stack([layer.weights(h, last)[0] for h in range(H)]))[None]


def _row(attention: torch.Tensor, fed: int) -> torch.Tensor:
    """The last query's row over all fed positions, (B, H, fed). A sliding-window cache keeps
    only the window's keys; the positions it dropped were masked, so their weight is 0."""
    row = attention[:, :, -1]  # (B, H, K) with K ≤ fed
    return torch.nn.functional.pad(row, (fed - row.size(-1), 0))
