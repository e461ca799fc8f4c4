"""Experiments: the findings of the head literature, measured live on the model at hand
(README, "Experiments"). A result is read from the cache when it is there, else run on request
with a progress bar."""

from __future__ import annotations

import streamlit as st

from attnlens.analysis.experiments.catalog import DEFAULT_N, NAMES, TITLES, why_not
from attnlens.analysis.experiments.common import MAX_N
from attnlens.analysis.experiments.definitions import DEFINITIONS
from attnlens.app.web import urlstate
from attnlens.app.web.experiments.sections import cached_or_none, result_view
from attnlens.app.web.experiments.turns import n_refusal, run_in_turn
from attnlens.app.web.pickers import text_input, traced
from attnlens.app.web.safe_text import md
from attnlens.app.web.scaffold import page_start
from attnlens.model.lenses.hf.ablation import ablation_support

WHAT = {
    "induction": "Per head: the share of attention on the token after the earlier match "
    "(induction) and on the previous token, on random tokens written twice; the loss on the "
    "second copy against the first (decoders).",
    "importance": "Per head: what the model loses when that head alone is ablated (exact "
    "match, log-likelihood per token; on an encoder-only model, how close its output stays to "
    "the whole model's) and Voita's confidence; then heads pruned least important first, over "
    "all heads and one kind at a time (greedy and beam search).",
    "explanation": "For one output token: how much its log-probability drops when each input "
    "token is erased in turn (on our models blanked out: hidden from every query), ranked "
    "against raw attention, rollout and flow (Spearman ρ per layer), on this input and "
    "averaged over held-out inputs.",
    "alignment": "Per cross-attention head: how often its largest weight lands on the true "
    "source of the output token (our task models know it), by layer, beside its importance.",
}


def page() -> None:
    lens = page_start("experiments", "Experiments")
    if lens is None:
        return
    fits = next((n for n in NAMES if why_not(lens, n) is None), NAMES[0])  # first that applies
    urlstate.prepare("w_experiment", "experiment", fits, str, list(NAMES))
    name = st.selectbox("Experiment", NAMES, key="w_experiment", format_func=TITLES.__getitem__)
    urlstate.remember("experiment", name)
    st.caption(md(WHAT[name]))
    with st.expander("Exact definition: inputs, queries, keys, paper"):
        st.markdown(DEFINITIONS[name])  # fixed words: our own definitions, no user input
        if name in ("importance", "alignment", "induction"):  # the experiments that ablate
            st.caption(md(ablation_support()))
    reason = why_not(lens, name)
    if reason is not None:
        st.info(md(reason))
        return
    cols = st.columns(3)
    n = int(cols[0].number_input("Inputs (n)", 1, MAX_N, DEFAULT_N[name], key=f"w_n_{name}"))
    seed = int(cols[1].number_input("Seed", 0, 2**31 - 1, 0, key="w_exp_seed"))
    text = text_input(lens) if name in ("induction", "explanation") else lens.example
    outcome = cached_or_none(lens, name, n, seed)
    if outcome is None and (too_many := n_refusal(n)) is not None:
        st.info(md(too_many))  # a server's bound; a cached result is shown whatever its n
        return
    if outcome is None:
        cols[2].write("")
        if cols[2].button("Run", key="w_run_experiment", type="primary"):
            outcome = run_in_turn(lens, name, n, seed)
        else:
            st.info(md(f"Not run yet on {lens.name} with n={n}, seed {seed}: press Run."))
    if outcome is None:
        return
    trace = traced(lens, text, None) if name == "induction" else None
    result_view(lens, outcome, trace, text)


page()
