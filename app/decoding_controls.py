"""Decoding settings as controls: strategy and its knobs, what-if forcing and ablation."""

from __future__ import annotations

from typing import Any

import streamlit as st

import model
from app import urlstate
from app.inputs import memo
from app.safe_text import md
from model.decoding import DecodeRun

STRATEGIES = ("greedy", "beam", "sample")


def output_room(lens: model.Lens, text: str) -> int:
    """The longest output decoding text may ask for (a decoder-only model's prompt takes room
    from it); the model's whole length when text cannot be decoded (its message comes later)."""
    try:
        return lens.decode_plan(text).limits.max_len
    except ValueError:
        return lens.max_tokens


def settings(lens: model.Lens, text: str) -> dict[str, Any]:
    """Strategy (in the URL) and every knob `Lens.decode` takes, as keyword arguments."""
    urlstate.prepare("w_strategy", "strategy", "beam", str, list(STRATEGIES))
    cols = st.columns(4)
    strategy = cols[0].selectbox("Strategy", STRATEGIES, key="w_strategy")
    urlstate.remember("strategy", strategy)
    beam_size = cols[1].number_input("Beam size", 1, 16, 4, key="w_beam_size")
    room = output_room(lens, text)
    if int(st.session_state.get("w_max_len", room)) > room:  # a longer prompt left less room
        st.session_state["w_max_len"] = room
    max_len = cols[2].number_input(
        "Max length", 1, room, room, key="w_max_len", help=f"at most {room} for this input"
    )
    length_penalty = cols[3].number_input("Length penalty α", 0.0, 5.0, 0.0, 0.1, key="w_alpha")
    with st.expander("Sampling settings"):
        s = st.columns(4)
        temperature = s[0].number_input("Temperature", 0.05, 10.0, 1.0, 0.05, key="w_temp")
        top_k = s[1].number_input("Top-k (0 = off)", 0, 1000, 0, key="w_top_k")
        top_p = s[2].number_input("Top-p (1 = off)", 0.01, 1.0, 1.0, 0.01, key="w_top_p")
        seed = s[3].number_input("Seed", 0, 2**31 - 1, 0, key="w_seed")
    return {
        "strategy": str(strategy),
        "beam_size": int(beam_size),
        "max_len": int(max_len),
        "length_penalty": float(length_penalty),
        "temperature": float(temperature),
        "top_k": int(top_k) or None,
        "top_p": None if top_p >= 1.0 else float(top_p),
        "seed": int(seed) if strategy == "sample" else None,
    }


def decoded(lens: model.Lens, text: str, slot: str, **kwargs: Any) -> DecodeRun | None:
    """One decoding run (memoised per session); a message in place of bad settings."""
    key = (lens.name, id(lens), text, repr(sorted(kwargs.items())))
    try:
        return memo(slot, key, lambda: lens.decode(text, **kwargs))
    except ValueError as err:
        st.error(md(err))
        return None


def head_names(lens: model.Lens) -> list[str]:
    """Every head that can be ablated, as `KIND:LAYER.HEAD`."""
    kinds = {"encoder-decoder": ("encoder", "decoder", "cross"), "decoder": ("decoder",)}
    return [
        f"{kind}:{layer}.{head}"
        for kind in kinds.get(lens.info.architecture, ("encoder",))
        for layer in range(lens.info.n_layers)
        for head in range(lens.info.n_heads)
    ]


def what_if(lens: model.Lens, n_steps: int) -> tuple[dict[int, str] | None, list[str] | None]:
    """Force one token at one step, and/or ablate heads."""
    cols = st.columns([1, 1, 3])
    step = cols[0].number_input("Force at step", 0, max(n_steps - 1, 0), 0, key="w_force_step")
    token = cols[1].text_input("Token to force", "", key="w_force_token")
    ablate = cols[2].multiselect(
        "Ablate heads (zero their output)", head_names(lens), key="w_ablate"
    )
    force = {int(step): str(token)} if token else None
    return force, list(ablate) or None
