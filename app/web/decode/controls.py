"""Decoding settings as controls, derived from `DecodeRequest`: one widget per field, each kept
in the URL under the field's name, so a shared link replays the run; what-if forcing and
ablation too."""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from attnlens.analysis.experiments.common import kinds_of
from attnlens.app.web import urlstate, waits
from attnlens.app.web.pickers import measure_radio, memo
from attnlens.app.web.safe_text import md
from attnlens.model.decoding.heads import HeadRef, head_name
from attnlens.model.decoding.request import (
    DEFAULT_STRATEGY,
    STRATEGIES,
    DecodeRequest,
    ModelLimits,
    knobs,
)
from attnlens.model.lenses.hf.ablation import ablation_support
from attnlens.model.lenses.lens import Lens
from attnlens.record.decode import DecodeRun
from attnlens.record.norms import Measure

LABELS = {
    "strategy": "Strategy",
    "beam_size": "Beam size",
    "max_len": "Max length",
    "length_penalty": "Length penalty α",
    "temperature": "Temperature",
    "top_k": "Top-k (0 = off)",
    "top_p": "Top-p (1 = off)",
    "seed": "Seed",
}
STRATEGY_NAMES = {"beam": "beam search", "sample": "sampling"}
MAIN = ("strategy", "beam_size", "max_len", "length_penalty")
SAMPLING = ("temperature", "top_k", "top_p", "seed")
OFF = {"top_k": 0, "top_p": 1.0}  # the widget value that means None

VIEWS = {  # the Decode page's tabs, in the URL as view=NAME
    "steps": "Step by step",
    "versus": "Greedy, beam search and sampling side by side",
    "what-if": "What if…",
}


def limits_of(lens: Lens, text: str) -> ModelLimits | None:
    """What decoding text may ask of this model; None when text cannot be decoded (its message
    comes later, from the run itself)."""
    try:
        return lens.decode_plan(text).limits
    except ValueError:
        return None


def _defaults(lens: Lens, limits: ModelLimits | None) -> dict[str, Any]:
    """Each widget's starting value: the request's defaults, the model's where it has its own."""
    base = {f.name: f.default for f in dataclasses.fields(DecodeRequest) if f.name in LABELS}
    room = lens.max_tokens if limits is None else limits.max_len
    base["max_len"] = room if limits is None else (limits.default_max_len or room)
    base["length_penalty"] = 0.0 if limits is None else limits.default_length_penalty
    base["seed"] = 0
    return {**base, **OFF}


def _widget(
    where: Any, name: str, default: Any, high: float | None = None, off: str | None = None
) -> Any:
    """The widget of one DecodeRequest field, its bounds from the field's Knob (top-k takes 0
    for "off"); a value outside them (a bad link, or less room after a longer prompt) gives
    way to the default. off: why the setting does nothing now (the widget is then disabled,
    its value kept for when it counts again)."""
    key, knob = f"w_{name}", knobs()[name]
    if name == "strategy":
        urlstate.prepare(key, name, str(DEFAULT_STRATEGY), str, list(STRATEGIES))
        return where.selectbox(LABELS[name], STRATEGIES, key=key, help=knob.help)
    cast: Any = int if isinstance(default, int) and not isinstance(default, bool) else float
    low = cast(0 if name == "top_k" else knob.low)
    ceiling = knob.high if high is None else high
    top = None if ceiling is None else cast(ceiling)
    _follow_default(key, name, cast(default))
    urlstate.prepare(key, name, cast(default), cast)
    value = st.session_state[key]
    if value < low or (top is not None and value > top):
        st.session_state[key] = cast(default)
    return where.number_input(
        LABELS[name], min_value=low, max_value=top, step=cast(knob.step or 1), key=key,
        help=knob.help if off is None else f"{off}. {knob.help}", disabled=off is not None,
    )  # fmt: skip


def _unused(name: str, strategy: object) -> str | None:
    """Why a setting does nothing under the strategy picked (its Knob names the strategies
    that use it: the beam size and α beam search, temperature, top-k, top-p and the seed
    sampling), else None. The side-by-side tab uses every one of them."""
    used = knobs()[name].strategies
    if name == "strategy" or strategy is None or strategy in used or _comparing():
        return None
    users = " and ".join(STRATEGY_NAMES.get(u, u) for u in used)
    return f"{LABELS[name]} is used by {users} only; the strategy is {strategy}"


def _comparing() -> bool:
    """Whether the side-by-side tab is open (greedy, beam search and sampling at once)."""
    view = st.session_state.get("w_view")
    if view is None:  # the page's first run: the tab a link opens
        return urlstate.remembered("view", "steps", str) == "versus"
    return bool(view == VIEWS["versus"])


def _follow_default(key: str, name: str, default: Any) -> None:
    """A setting whose default is the model's own (max length, length penalty) moves to the
    new default when another model (or prompt) changes it, unless the user set their own:
    translate's 63 stayed on lm, whose own is 107."""
    shown = f"_default_{name}"
    held = st.session_state.get(key, urlstate.remembered(name, None))
    if shown in st.session_state and held == st.session_state[shown] != default:
        st.session_state[key] = default
    st.session_state[shown] = default


def _row(n: int, stacked: bool) -> list[Any]:
    """n places for widgets: side by side, or one under another (a narrow sidebar)."""
    return [st.container() for _ in range(n)] if stacked else list(st.columns(n))


def settings(lens: Lens, text: str, stacked: bool = False) -> dict[str, Any]:
    """Strategy and every knob `Lens.decode` takes, as keyword arguments, each in the URL;
    `stacked` puts the widgets one under another (in the sidebar on a projector)."""
    limits = limits_of(lens, text)
    defaults = _defaults(lens, limits)
    room = lens.max_tokens if limits is None else limits.max_len
    values: dict[str, Any] = {}
    for col, name in zip(_row(len(MAIN), stacked), MAIN, strict=True):
        off = _unused(name, values.get("strategy"))
        values[name] = _widget(col, name, defaults[name], room if name == "max_len" else None, off)
    with st.expander("Sampling settings"):
        for col, name in zip(_row(len(SAMPLING), stacked), SAMPLING, strict=True):
            off = _unused(name, values["strategy"])
            values[name] = _widget(col, name, defaults[name], off=off)
    for name, value in values.items():
        urlstate.remember(name, value)
    strategy = str(values["strategy"])
    return {
        "strategy": strategy,
        "beam_size": int(values["beam_size"]),
        "max_len": int(values["max_len"]),
        "length_penalty": float(values["length_penalty"]),
        "temperature": float(values["temperature"]),
        "top_k": int(values["top_k"]) or None,
        "top_p": None if float(values["top_p"]) >= 1.0 else float(values["top_p"]),
        "seed": int(values["seed"]) if strategy == "sample" else None,
    }


def decoded(lens: Lens, text: str, slot: str, **kwargs: Any) -> DecodeRun | None:
    """One decoding run (made_run's); a message in place of bad settings."""
    try:
        return made_run(lens, text, slot, None, **kwargs)
    except ValueError as err:
        st.error(md(err))
        return None


def made_run(
    lens: Lens, text: str, slot: str, place: DeltaGenerator | None, **kwargs: Any
) -> DecodeRun:
    """One decoding run, memoised per session; the lens's ValueError for bad settings. While
    it runs, what runs and for how long shows in `place` (waits.py), else where the page is."""
    key = (lens.name, id(lens), text, repr(sorted(kwargs.items())))
    strategy = str(kwargs.get("strategy", DEFAULT_STRATEGY))
    steps = int(kwargs.get("max_len") or lens.max_tokens)
    width = int(kwargs.get("beam_size") or 1) if strategy == "beam" else 1
    name = f"{lens.name} {strategy}"  # the time of the last such run, per step and beam

    def run() -> DecodeRun:
        expected = waits.speeds().expected(name, steps * width, growth=1.0)
        what = f"Decoding with {STRATEGY_NAMES.get(strategy, strategy)}" + (
            f" ({width} beams)" if width > 1 else ""
        ) + f" on {lens.name}, at most {steps:,} tokens"  # fmt: skip
        decode = partial(lens.decode, text, **kwargs)
        timed = partial(waits.timed, name, steps * width, decode)
        return waits.waited(place, waits.Wait(what, expected), timed)

    return memo(slot, key, run)


def head_names(lens: Lens) -> list[str]:
    """Every head that can be ablated, as `KIND:LAYER.HEAD` (each kind its own stack's)."""
    return [
        str(HeadRef(kind, layer, head))
        for kind in kinds_of(lens.info)
        for layer in range(lens.info.shape(kind)[0])
        for head in range(lens.info.shape(kind)[1])
    ]


def what_if(lens: Lens, n_steps: int) -> tuple[dict[int, str] | None, list[str] | None]:
    """Force one token at one step (of up to n_steps: the run's length limit, so a step after
    the output's end can be asked for and the record says it was not reached), and/or ablate
    heads; both kept in the URL."""
    cols = st.columns([1, 1, 3])
    step, token = _remembered_force()
    urlstate.prepare("w_force_step", "force_step", step, int)
    urlstate.prepare("w_force_token", "force_token", token, str)
    step = cols[0].number_input("Force at step", 0, max(n_steps - 1, 0), key="w_force_step")
    token = cols[1].text_input("Token to force", key="w_force_token")
    can = lens.capabilities
    reason = None if can.ablation is not None else can.reason("ablation")
    names = head_names(lens) if reason is None else []
    urlstate.prepare("w_ablate", "ablate", [], None)
    if not isinstance(st.session_state.get("w_ablate"), list):
        st.session_state["w_ablate"] = []
    arch = lens.info.architecture  # a link from before the kinds were renamed says decoder:1.0
    asked = [head_name(str(h), arch) for h in st.session_state["w_ablate"]]
    st.session_state["w_ablate"] = [h for h in asked if h in names]
    if reason is not None and asked:
        st.info(md(f"Not ablated ({', '.join(map(str, asked))}): {reason}"))
    ablate = cols[2].multiselect(
        "Ablate heads (zero their output)", names, key="w_ablate", disabled=reason is not None,
        help=("" if reason is None else f"No head of {lens.name} can be ablated: {reason}. ")
        + ablation_support(),
    )  # fmt: skip
    force = {int(step): str(token)} if token else None
    if force:
        urlstate.remember("force", [f"{s}={t}" for s, t in force.items()])
    else:
        urlstate.forget("force")
    if ablate:
        urlstate.remember("ablate", list(ablate))
    else:
        urlstate.forget("ablate")
    return force, list(ablate) or None


def _remembered_force() -> tuple[int, str]:
    """The forced step and token a shared link carries (`force=STEP=TOKEN`), else none."""
    held: object = urlstate.remembered("force", [], None)
    first = held[0] if isinstance(held, list) and held else ""
    step, _, token = str(first).partition("=")
    return (int(step), token) if step.isdigit() else (0, "")


def measure_picker(where: DeltaGenerator, run: DecodeRun) -> Measure:
    """What a step's bars show (pickers.measure_radio, Explore's control), where the run's
    steps hold norms."""
    return measure_radio(where, run.has_norms, run.norms_missing)
