"""The decoding Stepper of a Hugging Face model, on the model's own key/value cache.

The search's state must never change once handed out (`reorder` and `step` return new states),
but transformers' Cache objects grow in place. So the state keeps the cached keys and values as
plain tensors, and each step wraps them in a fresh Cache (whose `update` concatenates into new
tensors, leaving ours untouched) and reads the grown tensors back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from transformers import Cache, DynamicCache, EncoderDecoderCache, PreTrainedModel
from transformers.modeling_outputs import BaseModelOutput

from model.decoding.heads import HeadRef
from model.decoding.stepper import StepOutput
from model.errors import InputError
from model.trace import Architecture

KV = tuple[tuple[torch.Tensor, torch.Tensor], ...]  # per layer: keys, values (B, H, n, d_k)


@dataclass(frozen=True)
class HFState:
    """What the next step needs: cached keys/values and, for an encoder-decoder, the memory."""

    self_kv: KV  # per decoder layer, n = positions fed so far (empty before the first feed)
    cross_kv: KV  # per decoder layer, n = S (empty until the first feed; decoder-only: empty)
    memory: torch.Tensor | None  # (B, S, d_model): the encoder output, None for decoder-only
    src_mask: torch.Tensor | None  # (B, S)


def ablation_unsupported(ablate: Sequence[object]) -> None:
    """transformers 5 removed `head_mask` from every model, so heads cannot be zeroed here."""
    if ablate:
        heads = ", ".join(str(ref) for ref in ablate)
        raise InputError(
            f"cannot ablate {heads}: Hugging Face models offer no head mask (transformers 5 "
            "removed head_mask); ablation works on attnlens' own models"
        )


class HFStepper:
    """Decodes a Hugging Face encoder-decoder or decoder-only model one position at a time."""

    def __init__(self, model: PreTrainedModel, kind: Architecture) -> None:
        if kind == "encoder":
            raise InputError("an encoder-only model does not generate text")
        self.model, self.kind = model, kind

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @torch.inference_mode()
    def start(
        self, source: Sequence[int] | None, prefix: Sequence[int], ablate: Sequence[HeadRef] = ()
    ) -> StepOutput[HFState]:
        """Run the encoder once on source (encoder-decoder), then feed prefix; B = 1."""
        ablation_unsupported(ablate)
        memory = src_mask = None
        if self.kind == "encoder-decoder":
            if source is None:
                raise InputError("an encoder-decoder model needs a source")
            src = torch.tensor([list(source)], dtype=torch.long, device=self.device)  # (1, S)
            src_mask = torch.ones_like(src)  # (1, S)
            encoder = self.model.get_encoder()
            memory = encoder(input_ids=src, attention_mask=src_mask).last_hidden_state
        first = torch.tensor([list(prefix)], dtype=torch.long, device=self.device)  # (1, P)
        return self._feed(HFState((), (), memory, src_mask), first)

    @torch.inference_mode()
    def step(self, state: HFState, tokens: torch.Tensor) -> StepOutput[HFState]:
        """Feed one token per hypothesis, tokens (B,)."""
        return self._feed(state, tokens.unsqueeze(1))  # (B, 1)

    def reorder(self, state: HFState, index: torch.Tensor) -> HFState:
        """The hypotheses index (B',) picks: rows of every cached tensor and of the memory."""

        def pick(kv: KV) -> KV:
            return tuple((k.index_select(0, index), v.index_select(0, index)) for k, v in kv)

        return HFState(
            pick(state.self_kv),
            pick(state.cross_kv),
            None if state.memory is None else state.memory.index_select(0, index),
            None if state.src_mask is None else state.src_mask.index_select(0, index),
        )

    def _cache(self, state: HFState) -> Cache:
        """A fresh Cache holding the state's tensors (the model grows it; the state stays)."""
        config = self.model.config
        own = DynamicCache(state.self_kv or None, config=config)
        if self.kind == "decoder":
            return own
        return EncoderDecoderCache(own, DynamicCache(state.cross_kv or None, config=config))

    def _feed(self, state: HFState, new: torch.Tensor) -> StepOutput[HFState]:
        """Run the decoder on new (B, n) after the cached positions; read off the last one."""
        if self.kind == "encoder-decoder":
            out = self.model(
                encoder_outputs=BaseModelOutput(last_hidden_state=state.memory),
                attention_mask=state.src_mask,
                decoder_input_ids=new,
                past_key_values=self._cache(state),
                use_cache=True,
                output_attentions=True,
            )
            own, cross = out.decoder_attentions, out.cross_attentions
        else:
            out = self.model(
                input_ids=new,
                past_key_values=self._cache(state),
                use_cache=True,
                output_attentions=True,
            )
            own, cross = out.attentions, None
        log_probs = torch.log_softmax(out.logits[:, -1].float(), dim=-1)  # (B, V)
        self_attention = torch.stack([a[:, :, -1] for a in own])  # (L, B, H, t + 1)
        cross_attention = None if cross is None else torch.stack([a[:, :, -1] for a in cross])
        return StepOutput(log_probs, self_attention, cross_attention, _next(state, out))


def _tensors(cache: Cache) -> KV:
    """Each layer's cached keys and values; a cache that is not plain keys/values is refused."""
    out = []
    for layer in cache.layers:
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        if not (isinstance(keys, torch.Tensor) and isinstance(values, torch.Tensor)):
            raise InputError(f"cannot step through a {type(layer).__name__} cache layer")
        out.append((keys, values))
    return tuple(out)


def _next(state: HFState, out: object) -> HFState:
    """The state after a feed: the grown cache read back as plain tensors."""
    cache = out.past_key_values  # type: ignore[attr-defined]
    if isinstance(cache, EncoderDecoderCache):
        own, cross = _tensors(cache.self_attention_cache), _tensors(cache.cross_attention_cache)
        return HFState(own, cross, state.memory, state.src_mask)
    return HFState(_tensors(cache), (), state.memory, state.src_mask)
