"""What our two own lenses share: a checkpoint folder, a tokenizer of ours, the memory budget,
decoding through the shared loop, training snapshots, evaluation and Q/K/V by return value."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import torch
from torch import nn

from attnlens.model.decoding.loop import Vocabulary, search
from attnlens.model.decoding.request import DecodeSettings
from attnlens.model.decoding.stepper import Stepper
from attnlens.model.lenses.budget import check_budget, decode_bytes
from attnlens.model.lenses.lens import Lens
from attnlens.model.net import checkpoint
from attnlens.model.net.attention import QKV
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.tokenizer import Encoding, Tokenizer, WordTokenizer
from attnlens.model.training import snapshots as kept
from attnlens.model.training.snapshots import Snapshot, SnapshotScore
from attnlens.record.decode import DecodeRun
from attnlens.record.errors import InputError
from attnlens.record.projections import HeadProjections
from attnlens.record.trace import KINDS, Architecture, Kind, ModelInfo, Trace

NetT = TypeVar("NetT", bound=nn.Module)


class OwnLens(Lens, Generic[NetT]):
    """One of attnlens' own models, saved by `attnlens train` as config.json + safetensors."""

    architecture: Architecture

    def __init__(self, folder: Path, device: torch.device, name: str | None = None) -> None:
        self.folder, self.device = folder, device
        described = checkpoint.describe(folder)  # checked, and within the model budget
        self.meta: dict[str, Any] = described.meta
        self.tokenizer: Tokenizer = described.tokenizer
        self.net: NetT = self.build(described.config)
        checkpoint.load_weights(self.net, folder / checkpoint.WEIGHTS, device)
        c = self.config
        shown_name = name or str(self.meta.get("name", folder.name))
        self.info = ModelInfo(shown_name, self.architecture, c.N, c.h, c.d_model)
        self.description = str(self.meta.get("description", ""))

    @abstractmethod
    def build(self, config: TransformerConfig) -> NetT:
        """The network a checkpoint of this architecture holds, before its weights."""

    @property
    def config(self) -> TransformerConfig:
        config: TransformerConfig = self.net.config  # type: ignore[assignment]
        return config

    @property
    def max_tokens(self) -> int:
        return self.config.max_len - 1  # one position is kept for the start or end token

    def text_of(self, tokens: Sequence[str]) -> str:
        return self.tokenizer.spell(tokens)

    def encode(self, text: str, what: str, limit: int) -> tuple[Encoding, list[str]]:
        """Text to ids within `limit` tokens; pieces outside the vocabulary (special tokens'
        names included: typed text never becomes a special token) become a warning."""
        tok = self.tokenizer
        n = tok.count(text)
        if n > limit:
            raise InputError(
                f"{what} has {n} {tok.unit}s but {self.info.name} takes at most {limit}"
            )
        enc = tok.encode(text)
        warnings = []
        if enc.unknown:
            warnings.append(self.unknown_warning(what, enc.unknown))
        return enc, warnings

    def unknown_warning(self, what: str, unknown: Sequence[str]) -> str:
        """What the user is told about pieces read as <unk>."""
        tok = self.tokenizer
        shown = tok.join(list(dict.fromkeys(unknown)))
        known = f"; it knows {len(tok.pieces)}: {' '.join(tok.pieces)}"
        return f"{what} {tok.unit}s outside the vocabulary were read as <unk>: {shown!r}" + (
            known if isinstance(tok, WordTokenizer) else ""
        )

    def run(
        self,
        stepper: Stepper[Any],
        settings: DecodeSettings,
        source: Sequence[int] | None,
        prefix: Sequence[int],
        shown: Sequence[str],
        warnings: Sequence[str],
    ) -> DecodeRun:
        """Check the record fits the memory budget, search, and wrap the result as a record.

        shown: the tokens the record lists as its input (the source, or a decoder-only prompt).
        """
        info, tok = self.info, self.tokenizer
        context = len(source) if source is not None else len(prefix)
        needed = decode_bytes(
            info.n_layers, info.n_heads, context, settings.max_len, settings.width
        )
        check_budget(needed, "decode", "use a shorter max length or fewer beams")
        # <pad>, <s> and <unk> are never targets in training; were one chosen, the output text
        # (which drops specials) would no longer spell the output tokens
        banned = (tok.pad_id, tok.bos_id, tok.unk_id)
        vocab = Vocabulary(tok.vocab, tok.eos_id, lambda ids: tok.decode(list(ids)), banned)
        steps, hypotheses = search(stepper, settings, source, prefix, vocab)
        return DecodeRun(
            settings.strategy, settings.params(tok.vocab), tuple(shown), hypotheses, steps, info,
            (*warnings, *_forced_past_end(settings, steps, tok.vocab)),
            tuple(tok.token(i) for i in prefix),
        )  # fmt: skip

    def head_projections(self, trace: Trace, kind: Kind, layer: int, head: int) -> HeadProjections:
        """Re-run the model on the tokens trace saw, keeping each attention's Q, K and V: the
        very tensors the attention computed with, returned by value."""
        n_layers, n_heads = self.info.n_layers, self.info.n_heads
        if kind not in KINDS:
            raise InputError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in (layer, head)):
            raise InputError(f"layer and head must be whole numbers, got {layer!r} and {head!r}")
        if not (0 <= layer < n_layers and 0 <= head < n_heads):
            raise InputError(
                f"layer {layer}, head {head} does not exist: the model has layers "
                f"0-{n_layers - 1} and heads 0-{n_heads - 1}"
            )
        qkv, mask = self.attention_inputs(trace, kind, layer)
        return HeadProjections(
            kind, layer, head, numpy_of(qkv.q[0, head]), numpy_of(qkv.k[0, head]),
            numpy_of(qkv.v[0, head]),
            mask,
        )  # fmt: skip

    @abstractmethod
    def attention_inputs(self, trace: Trace, kind: Kind, layer: int) -> tuple[QKV, np.ndarray]:
        """One layer's Q, K, V of one kind on trace's tokens, and the (T_q, T_k) mask applied."""

    def ids_of(self, tokens: Sequence[str]) -> torch.Tensor:
        """A record's token strings back to ids, (1, T)."""
        index = self.tokenizer.index
        return torch.tensor([[index[t] for t in tokens]], device=self.device)

    def snapshots(self) -> list[Snapshot]:
        return kept.snapshots(self.folder)

    def snapshot(self, step: int) -> Lens:
        """A snapshot loads as a model of this kind, named after the finished model."""
        found = {s.step: s for s in self.snapshots()}
        if step not in found:
            return super().snapshot(step)
        return type(self)(found[step].path, self.device, name=f"{self.name} @ step {step}")

    @property
    def task_name(self) -> str | None:
        task = self.meta.get("task")
        return str(task) if kept.scorable(task) else None

    def snapshot_scores(self) -> list[SnapshotScore]:
        task = self.task_name
        return [] if task is None else kept.score_snapshots(self.snapshots(), task)

    def loss_curve(self) -> tuple[list[int], list[float]]:
        return kept.loss_curve(self.meta)


def _forced_past_end(
    settings: DecodeSettings, steps: Sequence[object], names: Sequence[str]
) -> list[str]:
    """A warning for each forced token the output ended before reaching."""
    return [
        f"forced {names[token]!r} at step {step} was not used: the output ended after "
        f"{len(steps)} step{'s' * (len(steps) != 1)}"
        for step, token in settings.force
        if step >= len(steps)
    ]


def numpy_of(t: torch.Tensor) -> np.ndarray:
    """A tensor as float32 numpy on the CPU, a copy."""
    return t.detach().float().cpu().numpy().copy()
