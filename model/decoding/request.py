"""What a decoding run is asked to do: defined once, as `DecodeRequest`, and checked once
against the model it runs on (`DecodeSettings`).

Every front end derives from the fields of `DecodeRequest` and their `Knob` metadata: the CLI's
flags (`attnlens decode --beam-size …`), the app's widgets and URL keys, and the record's
`params` (which `Lens.decode(text, **params)` replays). A new setting is one new field here.
"""

from __future__ import annotations

import dataclasses
import math
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from attnlens.model.decoding.heads import HeadRef, check_head, parse_head
from attnlens.record.errors import InputError
from attnlens.record.trace import Kind

StrategyName = Literal["greedy", "beam", "sample"]
STRATEGIES: tuple[StrategyName, ...] = ("greedy", "beam", "sample")
DEFAULT_STRATEGY: StrategyName = "greedy"
MAX_BEAM = 16  # wider beams cost more than they show: 16 rows already fill a figure
MAX_SEED = 2**63
MIN_TEMPERATURE = 0.01  # below this, logits / T overflow float32 for real models
MIN_TOP_P = 1e-6  # below this, float32 rounds p to 0 and every token would be dropped
LengthNorm = Literal["gnmt", "power"]  # ((5 + |Y|) / 6)^α (ours) or |Y|^α (Hugging Face)
EarlyStopping = bool | Literal["never"]


@dataclass(frozen=True)
class Knob:
    """How one setting appears to users: flag help, widget bounds, which strategies use it."""

    help: str
    metavar: str = ""
    low: float | None = None
    high: float | None = None
    step: float | None = None
    strategies: tuple[StrategyName, ...] = STRATEGIES


def knob(default: Any, **kwargs: Any) -> Any:
    """A DecodeRequest field with its Knob (a dict default is made fresh for each request)."""
    meta = {"knob": Knob(**kwargs)}
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class DecodeRequest:
    """Every setting of a decoding run as a user gives it (tokens and heads by name)."""

    strategy: StrategyName = knob(DEFAULT_STRATEGY, help="greedy, beam or sample")  # noqa: RUF009
    beam_size: int = knob(
        4, help=f"beams kept (1-{MAX_BEAM})", metavar="K", low=1, high=MAX_BEAM, step=1,
        strategies=("beam",),
    )  # fmt: skip
    max_len: int | None = knob(
        None, help="most tokens to generate (default: the model's)", metavar="N", low=1, step=1
    )
    length_penalty: float | None = knob(
        None, help="α ≥ 0 of beam search's length normalisation (default: the model's; 0 = "
        "none on our models)", metavar="A", low=0.0, high=5.0, step=0.1, strategies=("beam",),
    )  # fmt: skip
    temperature: float = knob(
        1.0, help=f"≥ {MIN_TEMPERATURE}", metavar="T", low=MIN_TEMPERATURE, high=10.0,
        step=0.05, strategies=("sample",),
    )  # fmt: skip
    top_k: int | None = knob(
        None, help="keep the K likeliest tokens", metavar="K", low=1, high=1000, step=1,
        strategies=("sample",),
    )  # fmt: skip
    top_p: float | None = knob(
        None, help="nucleus: keep the likeliest tokens up to probability P, in (0, 1]",
        metavar="P", low=MIN_TOP_P, high=1.0, step=0.01, strategies=("sample",),
    )  # fmt: skip
    seed: int | None = knob(
        None, help="sampling seed (default: a fresh one, recorded)", metavar="S", low=0,
        high=2**31 - 1, step=1, strategies=("sample",),
    )  # fmt: skip
    force: Mapping[int, str] = knob(
        {},
        help="emit TOKEN at STEP (from 0) and decode on from there", metavar="STEP=TOKEN",
    )  # fmt: skip
    ablate: tuple[str, ...] = knob((), help="zero these heads", metavar="LAYER.HEAD")
    generation_config: Mapping[str, Any] | None = knob(
        None, help="a Hugging Face model's output-changing generation settings (default: the "
        "model's own generation_config)",
    )  # fmt: skip

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> DecodeRequest:
        """From `Lens.decode`'s keywords; an unknown keyword is refused by name."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise InputError(
                f"unknown decoding setting {unknown[0]!r}; known: {', '.join(sorted(known))}"
            )
        given = dict(kwargs)
        for name in ("force", "ablate"):  # None (or nothing) means none
            if not given.get(name):
                given.pop(name, None)
        ablate = given.get("ablate", ())
        if isinstance(ablate, str):
            given["ablate"] = (ablate,)
        elif isinstance(ablate, Sequence):
            given["ablate"] = tuple(ablate)
        else:
            raise InputError(f"heads to ablate must be a list of names, got {ablate!r}")
        return cls(**given)


def knobs() -> dict[str, Knob]:
    """Each DecodeRequest field's Knob, in field order."""
    return {f.name: f.metadata["knob"] for f in dataclasses.fields(DecodeRequest)}


@dataclass(frozen=True)
class ModelLimits:
    """What a model can decode: the longest output, its vocabulary, its heads, and how its
    beam search ranks finished hypotheses."""

    max_len: int
    vocab: Mapping[str, int]  # token string -> id
    n_layers: int
    n_heads: int
    kinds: tuple[Kind, ...]  # kinds of attention the model has
    architecture: str
    default_max_len: int | None = None  # when the request gives none; else max_len
    length_norm: LengthNorm = "gnmt"
    default_length_penalty: float = 0.0
    early_stopping: EarlyStopping = False
    generation_config: Mapping[str, Any] = field(default_factory=dict)  # applied processors
    # (layers, heads) of a kind whose sizes differ from n_layers and n_heads (a Hugging Face
    # encoder-decoder with fewer decoder layers than encoder layers)
    shapes: Mapping[Kind, tuple[int, int]] = field(default_factory=dict)

    def shape(self, kind: Kind) -> tuple[int, int]:
        return self.shapes.get(kind, (self.n_layers, self.n_heads))


@dataclass(frozen=True)
class DecodeSettings:
    """Every setting of one run; forced tokens as ids, ablated heads range-checked."""

    strategy: StrategyName
    max_len: int
    beam_size: int = 4
    length_penalty: float = 0.0
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    seed: int | None = None
    force: tuple[tuple[int, int], ...] = ()  # (step, token id), sorted by step
    ablate: tuple[HeadRef, ...] = ()
    length_norm: LengthNorm = "gnmt"
    early_stopping: EarlyStopping = False
    generation_config: Mapping[str, Any] = field(default_factory=dict)

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
        if self.generation_config:
            out["generation_config"] = dict(self.generation_config)
        return out


def _check_strategy(s: DecodeSettings) -> None:
    if s.strategy not in STRATEGIES:
        raise InputError(f"strategy must be greedy, beam or sample, got {s.strategy!r}")
    if not _is_int(s.max_len) or s.max_len < 1:
        raise InputError(f"max length must be at least 1, got {s.max_len}")


def _check_beam(s: DecodeSettings) -> None:
    if not _is_int(s.beam_size) or not 1 <= s.beam_size <= MAX_BEAM:
        raise InputError(f"beam size must be between 1 and {MAX_BEAM}, got {s.beam_size}")
    if not _is_number(s.length_penalty) or s.length_penalty < 0:
        raise InputError(f"length penalty must be a number ≥ 0, got {s.length_penalty}")


def _check_sampling(s: DecodeSettings) -> None:
    if not _is_number(s.temperature) or s.temperature <= 0:
        raise InputError(f"temperature must be greater than 0, got {s.temperature}")
    if s.temperature < MIN_TEMPERATURE:
        raise InputError(
            f"temperature {s.temperature} is below the smallest attnlens samples with, "
            f"{MIN_TEMPERATURE} (lower ones overflow; use greedy decoding for T → 0)"
        )
    if s.top_k is not None and (not _is_int(s.top_k) or s.top_k < 1):
        raise InputError(f"top-k must be at least 1, got {s.top_k}")
    if s.top_p is not None and (not _is_number(s.top_p) or not 0 < s.top_p <= 1):
        raise InputError(f"top-p must be in (0, 1], got {s.top_p}")
    if s.top_p is not None and s.top_p < MIN_TOP_P:
        raise InputError(
            f"top-p {s.top_p} is below the smallest attnlens keeps apart from 0, {MIN_TOP_P} "
            "(any p that small keeps only the likeliest token)"
        )
    if s.seed is not None and (not _is_int(s.seed) or not 0 <= s.seed < MAX_SEED):
        raise InputError(f"seed must be an integer from 0 to 2**63 - 1, got {s.seed}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return _is_int(value) or (isinstance(value, float) and math.isfinite(value))


def resolve(request: DecodeRequest, limits: ModelLimits) -> DecodeSettings:
    """A request checked against one model and input; a sampling run without a seed gets one."""
    max_len = request.max_len
    if max_len is None:
        max_len = limits.default_max_len or limits.max_len
    if _is_int(max_len) and max_len > limits.max_len:
        raise InputError(f"max length {max_len} is above this model's limit of {limits.max_len}")
    seed = request.seed
    if request.strategy == "sample" and seed is None:
        seed = secrets.randbelow(2**31)  # recorded in params, so the run still replays
    penalty = request.length_penalty
    return DecodeSettings(
        strategy=request.strategy,
        max_len=max_len,  # type: ignore[arg-type]  # checked in __post_init__
        beam_size=request.beam_size,
        length_penalty=_number(limits.default_length_penalty if penalty is None else penalty),
        temperature=_number(request.temperature),
        top_k=request.top_k,
        top_p=None if request.top_p is None else _number(request.top_p),
        seed=seed,
        force=_force_ids(request.force, limits.vocab),
        ablate=_heads(request.ablate, limits),
        length_norm=limits.length_norm,
        early_stopping=limits.early_stopping,
        generation_config=_generation_config(request.generation_config, limits),
    )


def _number(value: object) -> Any:
    """A number as a float (checked later, with the setting's own message); else as given."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return float(value)


def _generation_config(given: Mapping[str, Any] | None, limits: ModelLimits) -> dict[str, Any]:
    """The processors' settings: the model's own unless the request names others."""
    if given is None:
        return dict(limits.generation_config)
    if not isinstance(given, Mapping):
        raise InputError(f"generation_config must be a mapping, got {type(given).__name__}")
    unknown = sorted(set(given) - set(limits.generation_config))
    if unknown:
        have = ", ".join(sorted(limits.generation_config)) or "none"
        raise InputError(
            f"generation_config key {unknown[0]!r} does not apply to this model (it has: {have})"
        )
    return dict(given)


def _force_ids(force: Mapping[int, str], vocab: Mapping[str, int]) -> tuple[tuple[int, int], ...]:
    if not isinstance(force, Mapping):
        raise InputError(f"force must map steps to tokens, got {type(force).__name__}")
    out = []
    for step, token in force.items():
        try:
            at = int(step)
        except (TypeError, ValueError):
            raise InputError(f"forced step must be an integer, got {step!r}") from None
        if not isinstance(token, str) or token not in vocab:
            raise InputError(
                f"forced token {token!r} at step {at} is not in the model's vocabulary "
                f"of {len(vocab)} tokens"
            )
        out.append((at, vocab[token]))
    return tuple(sorted(out))


def _heads(texts: Sequence[str], limits: ModelLimits) -> tuple[HeadRef, ...]:
    if not all(isinstance(t, str) for t in texts):
        bad = next(t for t in texts if not isinstance(t, str))
        raise InputError(f"heads to ablate are named like '1.2' or 'cross:1.2', got {bad!r}")
    total = sum(layers * heads for layers, heads in map(limits.shape, limits.kinds))
    if len(texts) > total:
        raise InputError(f"{len(texts)} heads to ablate, but the model has only {total} heads")
    refs = [parse_head(t, limits.architecture) for t in texts]
    for ref in refs:
        check_head(ref, limits.kinds, *limits.shape(ref.kind))
    return tuple(sorted(set(refs)))
