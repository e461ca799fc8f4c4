"""Decode's "Which heads wrote this token": at the step being looked at, the chosen token's logit
split into each head's direct part beside the embeddings', biases' and MLPs' (the lens'
`attribution` part; viz/decoding/logit_parts.py), in an expander computed only while it is open.
A model without the part says why in one line."""

from __future__ import annotations

import streamlit as st

from attnlens import Lens
from attnlens.app.web import show, waits
from attnlens.app.web.pickers import memo
from attnlens.app.web.safe_text import md
from attnlens.model.lenses.parts import Attribution
from attnlens.record.attribution import LogitAttribution
from attnlens.record.decode import DecodeRun
from attnlens.record.errors import InputError
from attnlens.viz.decoding.logit_parts import logit_parts

TITLE = "Which heads wrote this token"
KEY = "w_wrote"


def wrote_view(lens: Lens, run: DecodeRun, step: int, row: int, decoded: str) -> None:
    """The expander; its token picker and figure are drawn (and computed) only when open.
    decoded: the token the followed path took at this step, from live row `row`."""
    can = lens.capabilities
    box = st.expander(TITLE, key=KEY, on_change="rerun")
    with box:
        if not box.open:
            return
        if can.attribution is None:
            st.caption(md(f"Not for this model: {can.reason('attribution')}"))
            return
        token = picked_token(lens, run, step, row, decoded)
        part = can.attribution
        run_key = (run.strategy, repr(run.params), run.src_tokens)
        key = (id(lens), lens.name, run_key, step, row, token)
        try:
            record = memo("decode_wrote", key, lambda: _attributed(lens, part, run, step, row,
                                                                   token))  # fmt: skip
        except InputError as err:
            st.caption(md(f"No attribution: {err}"))
            return
        shown = lens.display_tokens([token])[0]
        st.caption(md(sum_line(record)))
        show.figure(logit_parts(record, shown), "logit_parts", f"logit-parts-step{step}")


def picked_token(lens: Lens, run: DecodeRun, step: int, row: int, decoded: str) -> str:
    """The token asked about: the one decoded at this step (default), or any candidate."""
    options = list(dict.fromkeys([decoded, *(c.token for c in run.steps[step].candidates[row])]))
    shown = dict(zip(options, lens.display_tokens(options), strict=True))
    return str(st.selectbox(
        "Token", options, key=f"{KEY}_token_{step}_{row}",
        format_func=lambda t: repr(shown[t]) + (" (decoded)" if t == decoded else ""),
        help="the token decoded at this step, or another of its candidates",
    ))  # fmt: skip


def _attributed(
    lens: Lens, part: Attribution, run: DecodeRun, step: int, row: int, token: str
) -> LogitAttribution:
    """The record, saying what runs while it takes long (waits.py)."""
    n = len(run.keys(step, row)) + len(run.src_tokens)
    what = f"Splitting the logit at step {step} into each head's part ({lens.name}, {n:,} tokens)"
    return waits.waited(None, waits.Wait(what), lambda: part.at_step(run, step, token, row))


def sum_line(record: LogitAttribution) -> str:
    """The parts by group, and their sum beside the logit: the sum the figure shows."""
    heads = sum(float(v.sum()) for v in record.heads.values())
    mlp, biases = float(record.mlp.sum()), sum(record.biases.values())
    capped = f" (before the soft cap; capped: {record.logit:+.4f})"
    before = "" if record.softcap is None else capped
    return (
        f"embeddings {record.embeddings:+.4f} + heads {heads:+.4f} + MLPs {mlp:+.4f} + biases "
        f"{biases:+.4f} = {record.total:+.4f}; the model's logit {record.summed:+.4f}{before}"
    )
