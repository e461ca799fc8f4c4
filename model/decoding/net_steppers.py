"""The Steppers of our own models: the §3 encoder-decoder (the encoder runs once, each step
feeds one position) and the decoder-only model (the prompt is fed once, then one position)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from attnlens.model.decoding.carried import CarriedNorms, start_norms
from attnlens.model.decoding.heads import HeadRef
from attnlens.model.decoding.stepper import StepOutput
from attnlens.model.net.attention import KV
from attnlens.model.net.decoder_only import DecoderOnlyTransformer
from attnlens.model.net.masks import causal_mask
from attnlens.model.net.tokenizer import Tokenizer
from attnlens.model.net.transformer import HeadMask, Transformer
from attnlens.record.trace import KINDS


def rows_of(cache: list[KV] | None, index: torch.Tensor) -> list[KV] | None:
    """The key/value cache of the hypotheses index (B',) picks, per layer (new tensors)."""
    if cache is None:
        return None
    return [(k.index_select(0, index), v.index_select(0, index)) for k, v in cache]


@dataclass(frozen=True)
class TransformerState:
    """What the next step of our Transformer needs; the hypotheses of one source share its
    memory (start_batch's rows each have their own)."""

    memory_kv: list[KV]  # per decoder layer: the memory's keys and values, (1 or B, h, S, d_k) ×2
    src_mask: torch.Tensor  # (1 or B, 1, S)
    tokens: torch.Tensor  # (B, t + 1): every decoder input so far, the start token first
    cache: list[KV] | None  # per layer: self-attention keys/values (B, h, t + 1, d_k) ×2
    head_mask: HeadMask | None
    norms: CarriedNorms | None = None  # what the keys give each head, when asked for


class TransformerStepper:
    """Decodes with the key/value cache (cached=True) or by re-running the prefix each step;
    carried: each step also returns what its keys give each head (model/decoding/carried.py)."""

    def __init__(self, net: Transformer, cached: bool = True, carried: bool = False) -> None:
        self.net = net
        self.cached = cached
        self.carried = carried

    @property
    def device(self) -> torch.device:
        return next(self.net.parameters()).device

    @torch.inference_mode()
    def start(
        self, source: Sequence[int] | None, prefix: Sequence[int], ablate: Sequence[HeadRef] = ()
    ) -> StepOutput[TransformerState]:
        """§3.1: encode the source once, then feed the start token."""
        if source is None:
            raise ValueError("our Transformer is an encoder-decoder model: it needs a source")
        src = torch.tensor([list(source)], dtype=torch.long, device=self.device)  # (1, S)
        src_mask = torch.ones(1, 1, src.size(1), dtype=torch.bool, device=self.device)  # (1, 1, S)
        return self._begin(src, src_mask, prefix, self.head_mask(ablate))

    @torch.inference_mode()
    def start_batch(
        self,
        sources: Sequence[Sequence[int]],
        prefix: Sequence[int],
        ablate: Sequence[HeadRef] = (),
    ) -> StepOutput[TransformerState]:
        """`start` for many sources side by side, B = len(sources): each row as its source alone
        would be, its padding masked, so batched greedy decoding (`attnlens eval`) runs once."""
        if not sources:
            raise ValueError("start_batch needs at least one source")
        width, device = max(len(s) for s in sources), self.device
        rows = [[*s, *[Tokenizer.pad_id] * (width - len(s))] for s in sources]
        src = torch.tensor(rows, dtype=torch.long, device=device)  # (B, S)
        lengths = torch.tensor([len(s) for s in sources], device=device)  # (B,)
        src_mask = torch.arange(width, device=device) < lengths.unsqueeze(1)  # (B, S)
        return self._begin(src, src_mask.unsqueeze(1), prefix, self.head_mask(ablate))

    def _begin(
        self,
        src: torch.Tensor,
        src_mask: torch.Tensor,
        prefix: Sequence[int],
        head_mask: HeadMask | None,
    ) -> StepOutput[TransformerState]:
        """§3.1: encode src (B, S) once under src_mask (B, 1, S), then feed each row prefix."""
        memory = self.net.encode(src, src_mask, head_mask).memory  # (B, S, d_model)
        return self.start_encoded(memory, src_mask, prefix, head_mask)

    @torch.inference_mode()
    def start_encoded(
        self,
        memory: torch.Tensor,
        src_mask: torch.Tensor,
        prefix: Sequence[int],
        head_mask: HeadMask | None,
    ) -> StepOutput[TransformerState]:
        """Feed each row prefix after a memory (B, S, d_model) already encoded under src_mask
        (B, 1, S): the experiments encode a source once for every set of decoder heads."""
        rows = [list(prefix)] * memory.size(0)
        first = torch.tensor(rows, dtype=torch.long, device=self.device)  # (B, P)
        empty = first[:, :0]  # (B, 0): nothing fed yet; first is (B, P)
        memory_kv = self.net.memory_kv(memory)
        norms = self._start_norms(memory_kv) if self.carried else None
        state = TransformerState(memory_kv, src_mask, empty, None, head_mask, norms)
        return self._feed(state, first)

    def _start_norms(self, memory_kv: list[KV]) -> CarriedNorms:
        """The norms' W^O factors of every decoder layer and the memory's norms, once a run."""
        layers = self.net.decoder_layers()
        own = [layer.self_attn.w_o.weight for layer in layers]
        cross = [layer.src_attn.w_o.weight for layer in layers]
        return start_norms(self.net.config.h, own, cross, [v for _, v in memory_kv])

    @torch.inference_mode()
    def step(self, state: TransformerState, tokens: torch.Tensor) -> StepOutput[TransformerState]:
        """Feed one token per hypothesis, tokens (B,)."""
        return self._feed(state, tokens.unsqueeze(1))  # (B, 1)

    def reorder(self, state: TransformerState, index: torch.Tensor) -> TransformerState:
        """Follow the hypotheses index (B',) picks: rows of the prefix and of the cache (and of
        the memory, when start_batch gave each row its own source)."""
        tokens = state.tokens.index_select(0, index)
        norms = None if state.norms is None else state.norms.rows(index)
        state = replace(state, tokens=tokens, cache=rows_of(state.cache, index), norms=norms)
        if state.src_mask.size(0) == 1:  # one source, shared by every hypothesis
            return state
        memory_kv = [
            (k.index_select(0, index), v.index_select(0, index)) for k, v in state.memory_kv
        ]
        return replace(state, memory_kv=memory_kv, src_mask=state.src_mask.index_select(0, index))

    def head_mask(self, ablate: Sequence[HeadRef]) -> HeadMask | None:
        """(N, h) multipliers per kind, 0 for each ablated head."""
        if not ablate:
            return None
        c = self.net.config
        masks = {kind: torch.ones(c.N, c.h, device=self.device) for kind in KINDS}
        for ref in ablate:
            masks[ref.kind][ref.layer, ref.head] = 0.0
        return HeadMask(
            encoder=masks["encoder_self"], decoder=masks["decoder_self"], cross=masks["cross"]
        )

    def rows_mask(self, ablations: Sequence[Sequence[HeadRef]], repeat: int) -> HeadMask:
        """(N, B, h) multipliers per kind for B = len(ablations) × repeat rows: each set of
        ablated heads `repeat` times in a row, 0 for its heads."""
        c, rows = self.net.config, len(ablations) * repeat
        masks = {kind: torch.ones(c.N, rows, c.h, device=self.device) for kind in KINDS}
        for i, ablate in enumerate(ablations):
            for ref in ablate:
                masks[ref.kind][ref.layer, i * repeat : (i + 1) * repeat, ref.head] = 0.0
        return HeadMask(
            encoder=masks["encoder_self"], decoder=masks["decoder_self"], cross=masks["cross"]
        )

    def _feed(self, state: TransformerState, new: torch.Tensor) -> StepOutput[TransformerState]:
        """Run the decoder on the new positions new (B, n) and read off the last one."""
        tokens = torch.cat([state.tokens.expand(new.size(0), -1), new], dim=1)  # (B, t + 1)
        if self.cached:
            past, fed, cache = state.tokens.size(1), new, state.cache
        else:
            past, fed, cache = 0, tokens, None
        mask = causal_mask(fed.size(1), past, fed.device)  # (1, n, past + n)
        out = self.net.decode(state.memory_kv, state.src_mask, fed, mask, cache, state.head_mask)
        log_probs = self.net.log_probs(out.hidden[:, -1])  # (B, V)
        self_attention = out.self_attention[:, :, :, -1]  # (L, B, H, t + 1)
        cross_attention = out.cross_attention[:, :, :, -1]  # (L, B, H, S)
        keep = out.cache if self.cached else None
        norms = state.norms
        if norms is not None:  # uncached: every position was fed again
            norms = norms.grown([v[:, :, -fed.size(1) :] for _, v in out.cache], not self.cached)
        next_state = replace(state, tokens=tokens, cache=keep, norms=norms)
        own, cross = (None, None) if norms is None else norms.of_rows(fed.size(0))
        return StepOutput(log_probs, self_attention, cross_attention, next_state, None, own, cross)


def causal_head_mask(net: DecoderOnlyTransformer, ablate: Sequence[HeadRef]) -> torch.Tensor | None:
    """(N, h) multipliers of a decoder-only model, 0 for each ablated head; None for none."""
    if not ablate:
        return None
    c = net.config
    head_mask = torch.ones(c.N, c.h, device=next(net.parameters()).device)
    for ref in ablate:
        if ref.kind != "decoder_self":
            raise ValueError(f"a decoder-only model has no {ref.kind} attention to ablate")
        head_mask[ref.layer, ref.head] = 0.0
    return head_mask


def causal_rows_mask(
    net: DecoderOnlyTransformer, ablations: Sequence[Sequence[HeadRef]], repeat: int
) -> torch.Tensor:
    """(N, len(ablations) × repeat, h) multipliers: each set of ablated heads `repeat` times in
    a row, 0 for its heads (the experiments' ablations side by side)."""
    c, rows = net.config, len(ablations) * repeat
    head_mask = torch.ones(c.N, rows, c.h, device=next(net.parameters()).device)
    for i, ablate in enumerate(ablations):
        for ref in ablate:
            if ref.kind != "decoder_self":
                raise ValueError(f"a decoder-only model has no {ref.kind} attention to ablate")
            head_mask[ref.layer, i * repeat : (i + 1) * repeat, ref.head] = 0.0
    return head_mask


@dataclass(frozen=True)
class CausalState:
    """What the next step needs: every token so far and the self-attention cache."""

    tokens: torch.Tensor  # (B, t)
    cache: list[KV] | None  # per layer: keys/values (B, h, t, d_k) ×2
    head_mask: torch.Tensor | None  # (N, h)
    norms: CarriedNorms | None = None  # what the keys give each head, when asked for


class CausalStepper:
    """The decoding Stepper of a DecoderOnlyTransformer, on its key/value cache; carried: each
    step also returns what its keys give each head (model/decoding/carried.py)."""

    def __init__(self, net: DecoderOnlyTransformer, carried: bool = False) -> None:
        self.net = net
        self.device = next(net.parameters()).device
        self.carried = carried

    @torch.inference_mode()
    def start(
        self, source: Sequence[int] | None, prefix: Sequence[int], ablate: Sequence[HeadRef] = ()
    ) -> StepOutput[CausalState]:
        """Feed the prompt (start token first); a decoder-only model takes no source."""
        if source is not None:
            raise ValueError("a decoder-only model takes no source")
        head_mask = causal_head_mask(self.net, ablate)
        empty = torch.zeros(1, 0, dtype=torch.long, device=self.device)  # (1, 0)
        prompt = torch.tensor([list(prefix)], dtype=torch.long, device=self.device)  # (1, P)
        norms = None
        if self.carried:
            layers: list[Any] = list(self.net.layers)
            norms = start_norms(self.net.config.h, [m.self_attn.w_o.weight for m in layers])
        return self._feed(CausalState(empty, None, head_mask, norms), prompt)

    @torch.inference_mode()
    def step(self, state: CausalState, tokens: torch.Tensor) -> StepOutput[CausalState]:
        """Feed one token per hypothesis, tokens (B,)."""
        return self._feed(state, tokens.unsqueeze(1))  # (B, 1)

    def reorder(self, state: CausalState, index: torch.Tensor) -> CausalState:
        """The hypotheses index (B',) picks: rows of the tokens and of the cache."""
        tokens = state.tokens.index_select(0, index)
        norms = None if state.norms is None else state.norms.rows(index)
        return replace(state, tokens=tokens, cache=rows_of(state.cache, index), norms=norms)

    def _feed(self, state: CausalState, new: torch.Tensor) -> StepOutput[CausalState]:
        tokens = torch.cat([state.tokens.expand(new.size(0), -1), new], dim=1)  # (B, t + n)
        mask = causal_mask(new.size(1), state.tokens.size(1), self.device)  # (1, n, t + n)
        out = self.net.decode(new, mask, state.cache, state.head_mask)
        log_probs = self.net.log_probs(out.hidden[:, -1])  # (B, V)
        self_attention = out.self_attention[:, :, :, -1]  # (L, B, H, t + n)
        norms = state.norms
        if norms is not None:
            norms = norms.grown([v[:, :, -new.size(1) :] for _, v in out.cache])
        after = replace(state, tokens=tokens, cache=out.cache, norms=norms)
        own = None if norms is None else norms.of_rows(new.size(0))[0]
        return StepOutput(log_probs, self_attention, None, after, None, own)
