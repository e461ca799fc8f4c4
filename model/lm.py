"""The lens and decoding stepper of our decoder-only character language model (`lm`).

TEXT goes on the decoder side after the start token, as CONTRACTS.md asks of decoder-only
models; decoding continues it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from model import checkpoint
from model.attention import KV
from model.budget import check_budget, trace_bytes
from model.config import TransformerConfig
from model.decoder_only import DecoderOnlyTransformer
from model.decoding import ModelLimits
from model.decoding.heads import HeadRef
from model.decoding.stepper import StepOutput
from model.errors import InputError
from model.lens import DecodePlan, Lens
from model.masks import causal_mask
from model.own_decode import decode_own
from model.tokenizer import BOS, CharTokenizer, tokenizer_from_dict
from model.trace import ModelInfo, Trace


@dataclass(frozen=True)
class LMState:
    """What the next step needs: every token so far and the self-attention cache."""

    tokens: torch.Tensor  # (B, t)
    cache: list[KV] | None  # per layer: keys/values (B, h, t, d_k) ×2
    head_mask: torch.Tensor | None  # (N, h)


class LMStepper:
    """The decoding Stepper of a DecoderOnlyTransformer, on its key/value cache."""

    def __init__(self, net: DecoderOnlyTransformer) -> None:
        self.net = net
        self.device = next(net.parameters()).device

    @torch.inference_mode()
    def start(
        self, source: Sequence[int] | None, prefix: Sequence[int], ablate: Sequence[HeadRef] = ()
    ) -> StepOutput[LMState]:
        """Feed the prompt (start token first); a decoder-only model takes no source."""
        if source is not None:
            raise ValueError("a decoder-only model takes no source")
        head_mask = None
        if ablate:
            c = self.net.config
            head_mask = torch.ones(c.N, c.h, device=self.device)
            for ref in ablate:
                if ref.kind != "decoder":
                    raise ValueError(f"a decoder-only model has no {ref.kind} attention to ablate")
                head_mask[ref.layer, ref.head] = 0.0
        empty = torch.zeros(1, 0, dtype=torch.long, device=self.device)  # (1, 0)
        prompt = torch.tensor([list(prefix)], dtype=torch.long, device=self.device)  # (1, P)
        return self._feed(LMState(empty, None, head_mask), prompt)

    @torch.inference_mode()
    def step(self, state: LMState, tokens: torch.Tensor) -> StepOutput[LMState]:
        """Feed one token per hypothesis, tokens (B,)."""
        return self._feed(state, tokens.unsqueeze(1))  # (B, 1)

    def reorder(self, state: LMState, index: torch.Tensor) -> LMState:
        """The hypotheses index (B',) picks: rows of the tokens and of the cache."""
        cache = None
        if state.cache is not None:
            cache = [(k.index_select(0, index), v.index_select(0, index)) for k, v in state.cache]
        return replace(state, tokens=state.tokens.index_select(0, index), cache=cache)

    def _feed(self, state: LMState, new: torch.Tensor) -> StepOutput[LMState]:
        tokens = torch.cat([state.tokens.expand(new.size(0), -1), new], dim=1)  # (B, t + n)
        mask = causal_mask(new.size(1), state.tokens.size(1), self.device)  # (1, n, t + n)
        out = self.net.decode(new, mask, state.cache, state.head_mask)
        log_probs = self.net.log_probs(out.hidden[:, -1])  # (B, V)
        self_attention = out.self_attention[:, :, :, -1]  # (L, B, H, t + n)
        return StepOutput(
            log_probs, self_attention, None, replace(state, tokens=tokens, cache=out.cache)
        )


class LMLens(Lens):
    """A bundled decoder-only language model: causal self-attention only."""

    example = "The return statement"

    def __init__(self, folder: Path, device: torch.device, name: str | None = None) -> None:
        self.meta = checkpoint.read_description(folder)
        self.net = DecoderOnlyTransformer(TransformerConfig.from_dict(self.meta["transformer"]))
        checkpoint.load_weights(self.net, folder / checkpoint.WEIGHTS, device)
        tok = tokenizer_from_dict(self.meta["tokenizer"])
        if not isinstance(tok, CharTokenizer):
            raise ValueError(
                f"{folder}: a decoder-only model here reads characters, not {tok.unit}s"
            )
        self.tokenizer = tok
        c = self.net.config
        self.info = ModelInfo(
            name or str(self.meta.get("name", folder.name)), "decoder", c.N, c.h, c.d_model
        )
        self.description = str(self.meta.get("description", ""))

    @property
    def max_tokens(self) -> int:
        return self.net.config.max_len - 1  # one position holds the start token

    def prompt(
        self, text: str, target: str | None = None
    ) -> tuple[list[int], list[str], list[str]]:
        """Ids and tokens of <s> + text (+ target), and warnings about unknown characters."""
        if not text:
            raise InputError("text is empty; type at least one character")
        full = text + (target or "")
        if len(full) > self.max_tokens:
            raise InputError(
                f"text has {len(full)} characters but {self.info.name} "
                f"takes at most {self.max_tokens}"
            )
        enc = self.tokenizer.encode(full)
        warnings = []
        if enc.unknown:
            shown = "".join(dict.fromkeys(enc.unknown))
            warnings.append(f"characters outside the vocabulary were read as <unk>: {shown!r}")
        return [self.tokenizer.bos_id, *enc.ids], [BOS, *enc.tokens], warnings

    @torch.inference_mode()
    def trace(self, text: str, target: str | None = None) -> Trace:
        """TEXT (then target) on the decoder side; tgt_logprobs of each next character."""
        ids, tokens, warnings = self.prompt(text, target)
        c, T = self.net.config, len(ids)
        check_budget(trace_bytes(c.N, c.h, 0, T), "trace")
        x = torch.tensor([ids], device=next(self.net.parameters()).device)  # (1, T)
        mask = causal_mask(T, 0, x.device)  # (1, T, T)
        out = self.net.decode(x, mask)
        logprobs = self.net.log_probs(out.hidden)[0]  # (T, V)
        nxt = torch.tensor([*ids[1:], self.tokenizer.eos_id], device=x.device)  # (T,)
        return Trace(
            model=self.info, src_tokens=(), tgt_tokens=tuple(tokens),
            encoder_self=None, decoder_self=_numpy(out.self_attention[:, 0]),  # (N, h, T, T)
            cross=None, encoder_self_mask=None, decoder_self_mask=mask[0].cpu().numpy(),
            cross_mask=None, positional_encoding=_numpy(self.net.positional(0, T)),
            tgt_logprobs=_numpy(logprobs.gather(-1, nxt.unsqueeze(-1)).squeeze(-1)),
            warnings=tuple(warnings),
        )  # fmt: skip

    def text_of(self, tokens: Sequence[str]) -> str:
        return self.tokenizer.spell(tokens)

    def decode_plan(self, text: str) -> DecodePlan:
        """Continue TEXT: greedy, beam search or sampling, each step recorded."""
        ids, tokens, warnings = self.prompt(text)
        room = self.net.config.max_len - len(ids)
        if room < 1:
            raise InputError(
                f"text fills all {self.max_tokens} positions of {self.info.name}: "
                "no room to continue"
            )
        c, tok = self.net.config, self.tokenizer
        return DecodePlan(
            ModelLimits(room, tok.index, c.N, c.h, ("decoder",), "decoder"),
            lambda settings: decode_own(
                LMStepper(self.net), settings, tok, None, ids, tokens, self.info, warnings
            ),
        )


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().float().cpu().numpy().copy()
