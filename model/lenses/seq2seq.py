"""A lens over our own encoder-decoder Transformer (character or word tokens)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from attnlens.model.decoding.heads import HeadKind
from attnlens.model.decoding.request import ModelLimits
from attnlens.model.decoding.steppers import TransformerStepper
from attnlens.model.lenses.budget import check_budget, trace_bytes
from attnlens.model.lenses.lens import DecodePlan, check_text
from attnlens.model.lenses.own import OwnLens, numpy_of
from attnlens.model.net.attention import QKV
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.masks import padding_mask, subsequent_mask
from attnlens.model.net.tokenizer import BOS, EOS
from attnlens.model.net.transformer import Decoded, Encoded, Transformer
from attnlens.model.training.evaluate import Report, evaluate_task
from attnlens.model.training.tasks import TASKS
from attnlens.model.training.tasks.base import Example
from attnlens.record.errors import InputError
from attnlens.record.trace import Kind, Trace


class Seq2SeqLens(OwnLens[Transformer]):
    """One of the bundled encoder-decoder models (§3), traced by return value."""

    architecture = "encoder-decoder"

    def __init__(self, folder: Path, device: torch.device, name: str | None = None) -> None:
        super().__init__(folder, device, name)
        trained = self.meta.get("max_source_len", self.config.max_len - 1)
        if not isinstance(trained, int) or isinstance(trained, bool) or trained < 1:
            raise InputError(
                f"{folder.name}/config.json: max_source_len must be a whole number above 0, "
                f"got {trained!r}"
            )
        self.trained_len = trained
        task = self.meta.get("task")
        self.task = TASKS[task]() if task in TASKS else None
        if self.task is not None:
            self.example = self.task.example

    def build(self, config: TransformerConfig) -> Transformer:
        return Transformer(config)

    def source_ids(self, text: str) -> tuple[list[int], list[str], list[str]]:
        """Ids and token strings of the encoder input, and warnings about it."""
        unit, n = self.tokenizer.unit, self.tokenizer.count(check_text(text))
        if n == 0:
            raise InputError(f"text is empty; type at least one {unit}")
        enc, warnings = self.encode(text, "text", self.max_tokens)
        if n > self.trained_len:
            warnings.append(
                f"{self.info.name} was trained on at most {self.trained_len} {unit}s; "
                f"its output for {n} is unreliable"
            )
        return enc.ids + [self.tokenizer.eos_id], enc.tokens + [EOS], warnings

    def trace(self, text: str, target: str | None = None) -> Trace:
        """Teacher-forced on target; without one, on the model's own greedy output."""
        src, src_tokens, warnings = self.source_ids(text)
        c = self.config
        longest = self.max_tokens + 1
        if target is not None:
            longest = self.tokenizer.count(check_text(target, "target")) + 1
        check_budget(trace_bytes(c.N, c.h, len(src), longest), "trace")
        if target is None:
            target = self.decode(text).output_text
        enc, target_warnings = self.encode(target, "target", self.max_tokens)
        return self._teacher_forced(
            src, src_tokens, enc.ids, enc.tokens, warnings + target_warnings
        )

    def decode_plan(self, text: str) -> DecodePlan:
        """Greedy, beam search or sampling with the key/value cache, every step recorded."""
        src, src_tokens, warnings = self.source_ids(text)
        stepper, prefix = TransformerStepper(self.net), [self.tokenizer.bos_id]
        return DecodePlan(
            self.limits,
            lambda settings: self.run(stepper, settings, src, prefix, src_tokens, warnings),
        )

    def reference(self, text: str) -> Example | None:
        return None if self.task is None else self.task.reference(text)

    def evaluate(self, n: int, seed: int) -> Report:
        if self.task is None:
            return super().evaluate(n, seed)
        return evaluate_task(self.name, self.net, self.tokenizer, self.task, n, seed)

    @property
    def limits(self) -> ModelLimits:
        """What decoding may ask of this model: outputs up to max_tokens, every kind of head."""
        c = self.config
        kinds: tuple[HeadKind, ...] = ("encoder", "decoder", "cross")
        arch = self.info.architecture
        return ModelLimits(self.max_tokens, self.tokenizer.index, c.N, c.h, kinds, arch)

    @torch.inference_mode()
    def forward(
        self, src: torch.Tensor, tgt_in: torch.Tensor, keep_qkv: bool = False
    ) -> tuple[Encoded, Decoded, torch.Tensor, torch.Tensor]:
        """Teacher-forced pass over src (1, S) and tgt_in (1, T): what each stack returned, and
        the masks they applied: src_mask (1, 1, S), tgt_mask (1, T, T)."""
        pad, net = self.tokenizer.pad_id, self.net
        src_mask = padding_mask(src, pad)  # (1, 1, S)
        tgt_mask = padding_mask(tgt_in, pad) & subsequent_mask(tgt_in.size(1), self.device)
        encoded = net.encode(src, src_mask, keep_qkv=keep_qkv)
        memory_kv = net.memory_kv(encoded.memory)
        decoded = net.decode(memory_kv, src_mask, tgt_in, tgt_mask, keep_qkv=keep_qkv)
        return encoded, decoded, src_mask, tgt_mask

    def _teacher_forced(
        self,
        src: list[int],
        src_tokens: list[str],
        tgt: list[int],
        tgt_tokens: list[str],
        warnings: list[str],
    ) -> Trace:
        tok, net = self.tokenizer, self.net
        src_t = torch.tensor([src], device=self.device)  # (1, S)
        tgt_in = torch.tensor([[tok.bos_id, *tgt]], device=self.device)  # (1, T)
        encoded, decoded, src_mask, tgt_mask = self.forward(src_t, tgt_in)
        with torch.inference_mode():
            logprobs = net.log_probs(decoded.hidden)[0]  # (T, V)
        nxt = torch.tensor([*tgt, tok.eos_id], device=self.device)  # (T,)
        S, T = src_t.size(1), tgt_in.size(1)
        return Trace(
            model=self.info,
            src_tokens=tuple(src_tokens),
            tgt_tokens=(BOS, *tgt_tokens),
            encoder_self=numpy_of(encoded.attention[:, 0]),  # (N, h, S, S)
            decoder_self=numpy_of(decoded.self_attention[:, 0]),  # (N, h, T, T)
            cross=numpy_of(decoded.cross_attention[:, 0]),  # (N, h, T, S)
            encoder_self_mask=src_mask[0].expand(S, S).cpu().numpy(),
            decoder_self_mask=tgt_mask[0].cpu().numpy(),
            cross_mask=src_mask[0].expand(T, S).cpu().numpy(),
            positional_encoding=numpy_of(net.positional(0, max(S, T))),
            tgt_logprobs=numpy_of(logprobs.gather(-1, nxt.unsqueeze(-1)).squeeze(-1)),
            warnings=tuple(warnings),
        )

    def attention_inputs(self, trace: Trace, kind: Kind, layer: int) -> tuple[QKV, np.ndarray]:
        src, tgt = self.ids_of(trace.src_tokens), self.ids_of(trace.tgt_tokens)
        encoded, decoded, src_mask, tgt_mask = self.forward(src, tgt, keep_qkv=True)
        S, T = src.size(1), tgt.size(1)
        chosen = {
            "encoder_self": (encoded.qkv, src_mask[0].expand(S, S)),
            "decoder_self": (decoded.self_qkv, tgt_mask[0]),
            "cross": (decoded.cross_qkv, src_mask[0].expand(T, S)),
        }
        qkvs, mask = chosen[kind]
        assert qkvs is not None, "keep_qkv=True returns every layer's Q, K, V"
        return qkvs[layer], mask.cpu().numpy().astype(bool)
