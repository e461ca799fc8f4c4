"""What a decoding run was asked to do, checked once against the model it runs on."""

from __future__ import annotations

import math
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from model.decoding.heads import HeadKind, HeadRef, check_head, parse_head
from model.errors import InputError

StrategyName = Literal["greedy", "beam", "sample"]
STRATEGIES: tuple[StrategyName, ...] = ("greedy", "beam", "sample")
MAX_BEAM = 16  # wider beams cost more than they show: 16 rows already fill a figure
MAX_SEED = 2**63


@dataclass(frozen=True)
class ModelLimits:
    """What a model can decode: the longest output, its vocabulary and its heads."""

    max_len: int
    vocab: Mapping[str, int]  # token string -> id
    n_layers: int
    n_heads: int
    kinds: tuple[HeadKind, ...]  # kinds of attention the model has
    architecture: str


@dataclass(frozen=True)
class DecodeSettings:
    """Every setting of one run; forced tokens as ids, ablated heads range-checked."""

    strategy: StrategyName
    max_len: int
    beam_size: int = 4
    length_penalty: float = 0.0  # GNMT α: rank by log P / ((5 + |Y|) / 6)^α; 0 = none
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    seed: int | None = None
    force: tuple[tuple[int, int], ...] = ()  # (step, token id), sorted by step
    ablate: tuple[HeadRef, ...] = ()

    def __post_init__(self) -> None:
        _check_strategy(self)
        _check_beam(self)
        _check_sampling(self)
        for step, _ in self.force:
            if not 0 <= step < self.max_len:
                raise InputError(
                    f"forced step {step} is outside the output: steps run from 0 to "
                    f"{self.max_len - 1} (max length {self.max_len})"
                )

    @property
    def width(self) -> int:
        """How many hypotheses stay alive at once."""
        return self.beam_size if self.strategy == "beam" else 1

    def forced(self, step: int) -> int | None:
        """The token id forced at this step, if any."""
        return dict(self.force).get(step)

    def params(self, names: Sequence[str]) -> dict[str, Any]:
        """The settings this strategy used, keyed like `Lens.decode`'s keywords (replayable)."""
        out: dict[str, Any] = {"max_len": self.max_len}
        if self.strategy == "beam":
            out.update(beam_size=self.beam_size, length_penalty=self.length_penalty)
        if self.strategy == "sample":
            out.update(temperature=self.temperature, top_k=self.top_k, top_p=self.top_p)
            out.update(seed=self.seed)
        out["force"] = {step: names[token] for step, token in self.force}
        out["ablate"] = [str(ref) for ref in self.ablate]
        return out


def _check_strategy(s: DecodeSettings) -> None:
    if s.strategy not in STRATEGIES:
        raise InputError(f"strategy must be greedy, beam or sample, got {s.strategy!r}")
    if not isinstance(s.max_len, int) or s.max_len < 1:
        raise InputError(f"max length must be at least 1, got {s.max_len}")


def _check_beam(s: DecodeSettings) -> None:
    if not isinstance(s.beam_size, int) or not 1 <= s.beam_size <= MAX_BEAM:
        raise InputError(f"beam size must be between 1 and {MAX_BEAM}, got {s.beam_size}")
    if not math.isfinite(s.length_penalty) or s.length_penalty < 0:
        raise InputError(f"length penalty must be a number ≥ 0, got {s.length_penalty}")


def _check_sampling(s: DecodeSettings) -> None:
    if not math.isfinite(s.temperature) or s.temperature <= 0:
        raise InputError(f"temperature must be greater than 0, got {s.temperature}")
    if s.top_k is not None and (not isinstance(s.top_k, int) or s.top_k < 1):
        raise InputError(f"top-k must be at least 1, got {s.top_k}")
    if s.top_p is not None and not (0 < s.top_p <= 1):
        raise InputError(f"top-p must be in (0, 1], got {s.top_p}")
    if s.seed is not None and (not isinstance(s.seed, int) or not 0 <= s.seed < MAX_SEED):
        raise InputError(f"seed must be an integer from 0 to 2**63 - 1, got {s.seed}")


def make_settings(
    limits: ModelLimits,
    strategy: str = "greedy",
    beam_size: int = 4,
    max_len: int | None = None,
    length_penalty: float = 0.0,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    force: Mapping[int, str] | None = None,
    ablate: Sequence[str] | None = None,
) -> DecodeSettings:
    """`Lens.decode`'s keywords to checked settings; a sampling run without a seed gets one."""
    if max_len is None:
        max_len = limits.max_len
    if isinstance(max_len, int) and max_len > limits.max_len:
        raise InputError(f"max length {max_len} is above this model's limit of {limits.max_len}")
    if strategy == "sample" and seed is None:
        seed = secrets.randbelow(2**31)  # recorded in params, so the run still replays
    return DecodeSettings(
        strategy=strategy,  # type: ignore[arg-type]  # checked in __post_init__
        max_len=max_len,
        beam_size=beam_size,
        length_penalty=float(length_penalty),
        temperature=float(temperature),
        top_k=top_k,
        top_p=None if top_p is None else float(top_p),
        seed=seed,
        force=_force_ids(force or {}, limits.vocab),
        ablate=_heads([ablate] if isinstance(ablate, str) else ablate or (), limits),
    )


def _force_ids(force: Mapping[int, str], vocab: Mapping[str, int]) -> tuple[tuple[int, int], ...]:
    out = []
    for step, token in force.items():
        try:
            at = int(step)
        except ValueError:
            raise InputError(f"forced step must be an integer, got {step!r}") from None
        if token not in vocab:
            raise InputError(
                f"forced token {token!r} at step {at} is not in the model's vocabulary "
                f"of {len(vocab)} tokens"
            )
        out.append((at, vocab[token]))
    return tuple(sorted(out))


def _heads(texts: Sequence[str], limits: ModelLimits) -> tuple[HeadRef, ...]:
    total = len(limits.kinds) * limits.n_layers * limits.n_heads
    if len(texts) > total:
        raise InputError(f"{len(texts)} heads to ablate, but the model has only {total} heads")
    refs = [parse_head(t, limits.architecture) for t in texts]
    for ref in refs:
        check_head(ref, limits.kinds, limits.n_layers, limits.n_heads)
    return tuple(sorted(set(refs)))
