"""The DecodeRun record: a decoding run step by step, as plain numpy data (attnlens.decode/2).

/2 adds the decoder's prefix (what the decoder was fed before the first generated token: `<s>`
on our encoder-decoders, `<s>` and the prompt on a decoder-only model, a Hugging Face model's
own start token), so every step's self-attention keys are known. /1 records still load.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from attnlens.record.export import json_chunks, plain
from attnlens.record.html import HTML_ITEMS, html_table, model_line, token_line
from attnlens.record.kinds import ModelInfo
from attnlens.record.schema import check_schema

SCHEMA = "attnlens.decode/2"
READABLE = ("attnlens.decode/1", SCHEMA)
BeamStatus = Literal["alive", "finished", "pruned"]


@dataclass(frozen=True)
class BeamStep:
    """One continuation considered at a step: alive (kept), finished (ended) or pruned."""

    beam: int  # index in this step's list; alive beams come first, as 0..B'-1
    parent: int | None  # the alive beam of the previous step it extends; None at step 0
    token: str
    logprob: float  # log p(token | parent's prefix)
    score: float  # cumulative: the parent's score plus logprob
    status: BeamStatus


@dataclass(frozen=True)
class Candidate:
    """One of the most probable next tokens of a live beam."""

    token: str
    prob: float


@dataclass(frozen=True, eq=False)
class StepRecord:
    """What happened at one step. Row b of the arrays and of candidates is the live beam that
    was the previous step's alive beam b (the start token at step 0)."""

    step: int
    beams: tuple[BeamStep, ...]
    candidates: tuple[tuple[Candidate, ...], ...]  # per live beam, most probable first
    cross_attention: np.ndarray | None  # (L, H, B, S) float32: the new position's row
    decoder_self_attention: np.ndarray  # (L, H, B, step + 1) float32
    # ‖f_h(xⱼ)‖ of each key the row read (record/norms.py), the attention's shapes; None: not
    # recorded (DecodeRun.norms_missing says why where the model's values could not be taken)
    decoder_self_carried: np.ndarray | None = None  # (L, H, B, step + 1) float32
    cross_carried: np.ndarray | None = None  # (L, H, B, S) float32

    def measured(self, kind: str, measure: str = "weight") -> np.ndarray | None:
        """(L, H, B, K) float32: a kind's weights αᵢⱼ, or (norm) αᵢⱼ ‖f_h(xⱼ)‖; None where the
        step has no such attention; a ValueError where it holds no norms."""
        weights = self.cross_attention if kind == "cross" else self.decoder_self_attention
        if measure == "weight" or weights is None:
            return weights
        carried = self.cross_carried if kind == "cross" else self.decoder_self_carried
        if carried is None:
            raise ValueError(f"step {self.step} holds no norms of {kind} attention")
        out: np.ndarray = (weights * carried).astype(np.float32)
        return out


@dataclass(frozen=True)
class Hypothesis:
    """A complete output; `step` and `beam` locate its last token in `steps`."""

    tokens: tuple[str, ...]  # start token excluded, end token included if generated
    text: str
    score: float  # sum of natural-log probabilities of tokens
    finished: bool  # ended with the end token (else the maximum length stopped it)
    rank_score: float  # what the strategy ranks by: score / length penalty
    step: int
    beam: int


@dataclass(frozen=True, eq=False)
class DecodeRun:
    """A decoding run: settings, every step's beams and attention, hypotheses best first."""

    strategy: str
    params: dict[str, Any]  # every setting used; `Lens.decode(text, strategy, **params)` replays
    src_tokens: tuple[str, ...]
    hypotheses: tuple[Hypothesis, ...]  # best first by rank_score
    steps: tuple[StepRecord, ...]
    model: ModelInfo | None = None
    warnings: tuple[str, ...] = field(default=())
    prefix: tuple[str, ...] = ("<s>",)  # the decoder's input before the first generated token
    norms_missing: str | None = None  # why the steps hold no norms, where the model cannot say

    @property
    def has_norms(self) -> bool:
        """Whether every step holds what its keys give each head (the norm measure)."""
        return bool(self.steps) and all(s.decoder_self_carried is not None for s in self.steps)

    @property
    def best(self) -> Hypothesis:
        return self.hypotheses[0]

    @property
    def output_tokens(self) -> tuple[str, ...]:
        return self.best.tokens

    @property
    def output_text(self) -> str:
        return self.best.text

    @property
    def score(self) -> float:
        return self.best.score

    def path(self, step: int, beam: int) -> list[BeamStep]:
        """The beams from step 0 to (step, beam), following parent pointers."""
        out = [self.steps[step].beams[beam]]
        for t in range(step - 1, -1, -1):
            parent = out[-1].parent
            assert parent is not None, f"beam {out[-1].beam} of step {t + 1} has no parent"
            out.append(self.steps[t].beams[parent])
        return out[::-1]

    def keys(self, step: int, row: int) -> tuple[str, ...]:
        """The decoder self-attention keys of live row `row` at `step`: the prefix, then the
        tokens that row generated before this step (one per key of its attention row)."""
        if step == 0:
            return self.prefix
        return (*self.prefix, *(b.token for b in self.path(step - 1, row)))

    def beams_frame(self) -> pd.DataFrame:
        """One row per (step, beam): parent, token, logprob, score and status."""
        rows = [{"step": s.step, **b.__dict__} for s in self.steps for b in s.beams]
        return pd.DataFrame(rows, columns=["step", *BeamStep.__dataclass_fields__])

    def to_frame(self) -> pd.DataFrame:
        """Long format: one row per (step, row, kind, layer, head, key) with the key's token,
        its weight and what it gives the head, ‖f_h(xⱼ)‖ (carried; NaN where not recorded)."""
        frames = [
            _attention_frame(s.step, kind, (weights, carried), keys)
            for s in self.steps
            for kind, weights, carried, keys in (
                (
                    "decoder_self",
                    s.decoder_self_attention,
                    s.decoder_self_carried,
                    lambda r, t=s.step: self.keys(t, r),
                ),
                ("cross", s.cross_attention, s.cross_carried, lambda r: self.src_tokens),
            )
            if weights is not None
        ]
        if not frames:
            return pd.DataFrame(columns=list(FRAME_COLUMNS))
        return pd.concat(frames, ignore_index=True)

    def to_dict(self) -> dict[str, Any]:
        """The attnlens.decode/2 JSON object."""
        out: dict[str, Any] = plain(self.json_tree())
        return out

    def json_tree(self) -> dict[str, Any]:
        """The attnlens.decode/2 object with each step's attention kept as numpy arrays, for
        writers that stream them (record.export)."""
        out: dict[str, Any] = {
            "schema": SCHEMA,
            "strategy": self.strategy,
            "params": _params_out(self.params),
            "src_tokens": list(self.src_tokens),
            "prefix": list(self.prefix),
            "output_tokens": list(self.output_tokens),
            "output_text": self.output_text,
            "score": self.score,
            "hypotheses": [{**h.__dict__, "tokens": list(h.tokens)} for h in self.hypotheses],
            "steps": [_step_out(s) for s in self.steps],
        }
        if self.model is not None:
            out["model"] = self.model.to_dict()
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.norms_missing is not None:
            out["norms_missing"] = self.norms_missing
        return out

    def to_json(self, indent: int | None = None) -> str:
        """The record as JSON text (float32 attention in its shortest exact form)."""
        if indent is not None:
            return json.dumps(self.to_dict(), indent=indent)
        return "".join(json_chunks(self.json_tree()))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DecodeRun:
        check_schema(data, READABLE)
        steps = tuple(_step_in(s) for s in data["steps"])
        src_tokens = tuple(data["src_tokens"])
        prefix = data.get("prefix")
        return cls(
            strategy=data["strategy"],
            params=_params_in(data["params"]),
            src_tokens=src_tokens,
            hypotheses=tuple(_hypothesis_in(h) for h in data["hypotheses"]),
            steps=steps,
            model=ModelInfo(**data["model"]) if data.get("model") else None,
            warnings=tuple(data.get("warnings", ())),
            prefix=tuple(prefix) if prefix is not None else _v1_prefix(steps, src_tokens),
            norms_missing=data.get("norms_missing"),
        )

    @classmethod
    def from_json(cls, text: str) -> DecodeRun:
        return cls.from_dict(json.loads(text))

    def equals(self, other: DecodeRun) -> bool:
        """Exact equality of every field, arrays included."""
        return self.to_dict() == other.to_dict()

    def _repr_html_(self) -> str:
        """A notebook's compact summary: settings, input, output and score (escaped)."""
        rows = [("model", model_line(self.model))] if self.model is not None else []
        settings = ", ".join(f"{k}={v}" for k, v in self.params.items())
        rows += [("strategy", f"{self.strategy} ({settings})" if settings else self.strategy)]
        rows += [("source", token_line(self.src_tokens))] if self.src_tokens else []
        rows += [("output", repr(self.output_text)), ("tokens", token_line(self.output_tokens))]
        rows += [("score", f"{self.score:.4f} (sum of natural-log probabilities)")]
        rows += [("searched", f"{len(self.steps)} steps, {len(self.hypotheses)} hypotheses")]
        rows += [("warning", w) for w in self.warnings[:HTML_ITEMS]]
        return html_table("attnlens DecodeRun", rows)


FRAME_COLUMNS = ("step", "row", "kind", "layer", "head", "key", "key_token", "weight", "carried")


def _attention_frame(
    step: int,
    kind: str,
    arrays: tuple[np.ndarray, np.ndarray | None],
    keys: Callable[[int], tuple[str, ...]],
) -> pd.DataFrame:
    """One step's (L, H, B, K) attention of one kind and its keys' norms in long format."""
    weights, carried = arrays
    L, H, B, K = weights.shape
    if carried is None:
        carried = np.full(weights.shape, np.nan, dtype=np.float32)
    layer, head, row, key = (a.ravel() for a in np.indices((L, H, B, K)))
    tokens = np.asarray([keys(r) for r in range(B)], dtype=object)  # (B, K)
    return pd.DataFrame(
        {
            "step": np.full(layer.size, step),
            "row": row,
            "kind": np.full(layer.size, kind),
            "layer": layer,
            "head": head,
            "key": key,
            "key_token": tokens[row, key],
            "weight": weights.ravel(),
            "carried": carried.ravel(),
        }
    )


def _v1_prefix(steps: tuple[StepRecord, ...], src_tokens: tuple[str, ...]) -> tuple[str, ...]:
    """What an attnlens.decode/1 record's decoder was fed first: its prompt when it has no
    encoder (/1 kept a decoder-only prompt in src_tokens), else the start token."""
    lead = steps[0].decoder_self_attention.shape[-1] if steps else 1
    if steps and steps[0].cross_attention is None:
        return src_tokens[:lead]
    return ("<s>",) * lead


def _params_out(params: dict[str, Any]) -> dict[str, Any]:
    out = dict(params)
    if "force" in out:
        out["force"] = {str(k): v for k, v in out["force"].items()}
    return out


def _params_in(params: dict[str, Any]) -> dict[str, Any]:
    out = dict(params)
    if "force" in out:
        out["force"] = {int(k): v for k, v in out["force"].items()}
    return out


CARRIED = ("decoder_self_carried", "cross_carried")  # a step's norms, written where recorded


def _step_out(s: StepRecord) -> dict[str, Any]:
    out = {
        "step": s.step,
        "beams": [dict(b.__dict__) for b in s.beams],
        "candidates": [[dict(c.__dict__) for c in row] for row in s.candidates],
        "cross_attention": s.cross_attention,
        "decoder_self_attention": s.decoder_self_attention,
    }
    out.update({f: getattr(s, f) for f in CARRIED if getattr(s, f) is not None})
    return out


def _step_in(d: dict[str, Any]) -> StepRecord:
    cross = d["cross_attention"]
    carried = {f: _floats(d.get(f)) for f in CARRIED}
    return StepRecord(
        step=int(d["step"]),
        beams=tuple(BeamStep(**b) for b in d["beams"]),
        candidates=tuple(tuple(Candidate(**c) for c in row) for row in d["candidates"]),
        cross_attention=_floats(cross),
        decoder_self_attention=np.asarray(d["decoder_self_attention"], dtype=np.float32),
        **carried,
    )


def _floats(value: Any) -> np.ndarray | None:
    return None if value is None else np.asarray(value, dtype=np.float32)


def _hypothesis_in(d: dict[str, Any]) -> Hypothesis:
    return Hypothesis(**{**d, "tokens": tuple(d["tokens"])})
