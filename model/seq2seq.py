"""A lens over our own encoder-decoder Transformer (character or word tokens)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from model import checkpoint
from model.batch import pad_rows
from model.budget import check_budget, trace_bytes
from model.decoding import ModelLimits
from model.decoding.heads import HeadKind
from model.decoding.transformer_stepper import TransformerStepper
from model.errors import InputError
from model.lens import DecodePlan, Lens
from model.masks import padding_mask, subsequent_mask
from model.own_decode import decode_own
from model.tasks import TASKS
from model.tasks.base import Example
from model.tokenizer import EOS, Encoding, WordTokenizer
from model.trace import ModelInfo, Trace


class Seq2SeqLens(Lens):
    """One of the bundled encoder-decoder models (§3), traced by return value."""

    def __init__(self, folder: Path, device: torch.device, name: str | None = None) -> None:
        self.net, self.tokenizer, self.meta = checkpoint.load(folder, device)
        self.device = device
        c = self.net.config
        self.info = ModelInfo(
            name or str(self.meta.get("name", folder.name)), "encoder-decoder", c.N, c.h, c.d_model
        )
        self.description = str(self.meta.get("description", ""))
        self.trained_len = int(self.meta.get("max_source_len", c.max_len - 1))
        task = self.meta.get("task")
        self.task = TASKS[task]() if task in TASKS else None
        if self.task is not None:
            self.example = self.task.example

    @property
    def max_tokens(self) -> int:
        return self.net.config.max_len - 1  # one position is kept for the end token

    def source_ids(self, text: str) -> tuple[list[int], list[str], list[str]]:
        """Ids and token strings of the encoder input, and warnings about it."""
        unit, n = self.tokenizer.unit, self.tokenizer.count(text)
        if n == 0:
            raise InputError(f"text is empty; type at least one {unit}")
        enc, warnings = self._encode(text, "text")
        if n > self.trained_len:
            warnings.append(
                f"{self.info.name} was trained on at most {self.trained_len} {unit}s; "
                f"its output for {n} is unreliable"
            )
        return enc.ids + [self.tokenizer.eos_id], enc.tokens + [EOS], warnings

    def target_ids(self, target: str) -> tuple[list[int], list[str], list[str]]:
        """Ids and token strings of a target to teacher-force, and warnings about it."""
        enc, warnings = self._encode(target, "target")
        return enc.ids, enc.tokens, warnings

    def _encode(self, text: str, what: str) -> tuple[Encoding, list[str]]:
        """Text to ids within the length limit; pieces outside the vocabulary become a warning."""
        tok = self.tokenizer
        n = tok.count(text)
        if n > self.max_tokens:
            raise InputError(
                f"{what} has {n} {tok.unit}s but {self.info.name} takes at most {self.max_tokens}"
            )
        enc = tok.encode(text)
        warnings = []
        if enc.unknown:
            shown = tok.join(list(dict.fromkeys(enc.unknown)))
            known = f"; it knows {len(tok.pieces)}: {' '.join(tok.pieces)}"
            warnings.append(
                f"{what} {tok.unit}s outside the vocabulary were read as <unk>: {shown!r}"
                + (known if isinstance(tok, WordTokenizer) else "")
            )
        return enc, warnings

    def trace(self, text: str, target: str | None = None) -> Trace:
        """Teacher-forced on target; without one, on the model's own greedy output."""
        src, src_tokens, warnings = self.source_ids(text)
        c = self.net.config
        longest = self.max_tokens + 1 if target is None else self.tokenizer.count(target) + 1
        check_budget(trace_bytes(c.N, c.h, len(src), longest), "trace")
        if target is None:
            target = self.decode(text).output_text
        tgt, tgt_tokens, target_warnings = self.target_ids(target)
        return self._teacher_forced(src, src_tokens, tgt, tgt_tokens, warnings + target_warnings)

    def decode_plan(self, text: str) -> DecodePlan:
        """Greedy, beam search or sampling with the key/value cache, every step recorded."""
        src, src_tokens, warnings = self.source_ids(text)
        stepper, tok = TransformerStepper(self.net), self.tokenizer
        return DecodePlan(
            self.limits,
            lambda settings: decode_own(
                stepper, settings, tok, src, [tok.bos_id], src_tokens, self.info, warnings
            ),
        )

    def reference(self, text: str) -> Example | None:
        return None if self.task is None else self.task.reference(text)

    def text_of(self, tokens: Sequence[str]) -> str:
        return self.tokenizer.spell(tokens)

    @property
    def limits(self) -> ModelLimits:
        """What decoding may ask of this model: outputs up to max_tokens, every kind of head."""
        c = self.net.config
        kinds: tuple[HeadKind, ...] = ("encoder", "decoder", "cross")
        arch = self.info.architecture
        return ModelLimits(self.max_tokens, self.tokenizer.index, c.N, c.h, kinds, arch)

    @torch.inference_mode()
    def _teacher_forced(
        self,
        src: list[int],
        src_tokens: list[str],
        tgt: list[int],
        tgt_tokens: list[str],
        warnings: list[str],
    ) -> Trace:
        tok, net = self.tokenizer, self.net
        src_t = pad_rows([src], tok.pad_id).to(self.device)  # (1, S)
        tgt_in = pad_rows([[tok.bos_id] + tgt], tok.pad_id).to(self.device)  # (1, T)
        src_mask = padding_mask(src_t, tok.pad_id)  # (1, 1, S)
        tgt_mask = padding_mask(tgt_in, tok.pad_id) & subsequent_mask(tgt_in.size(1), self.device)
        encoded = net.encode(src_t, src_mask)
        decoded = net.decode(net.memory_kv(encoded.memory), src_mask, tgt_in, tgt_mask)
        logprobs = net.log_probs(decoded.hidden)[0]  # (T, V)
        nxt = torch.tensor(tgt + [tok.eos_id], device=self.device)  # (T,)
        S, T = src_t.size(1), tgt_in.size(1)
        return Trace(
            model=self.info,
            src_tokens=tuple(src_tokens),
            tgt_tokens=("<s>", *tgt_tokens),
            encoder_self=_numpy(encoded.attention[:, 0]),  # (N, h, S, S)
            decoder_self=_numpy(decoded.self_attention[:, 0]),  # (N, h, T, T)
            cross=_numpy(decoded.cross_attention[:, 0]),  # (N, h, T, S)
            encoder_self_mask=src_mask[0].expand(S, S).cpu().numpy(),
            decoder_self_mask=tgt_mask[0].cpu().numpy(),
            cross_mask=src_mask[0].expand(T, S).cpu().numpy(),
            positional_encoding=_numpy(net.positional(0, max(S, T))),
            tgt_logprobs=_numpy(logprobs.gather(-1, nxt.unsqueeze(-1)).squeeze(-1)),
            warnings=tuple(warnings),
        )


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().float().cpu().numpy().copy()
