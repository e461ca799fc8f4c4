"""The experiments in the app: run (with a progress bar) or read from the cache, then each
experiment's summary, figure, tables and downloads. The Experiments page shows any of them;
the Heads page shows the induction heads of a model that reads one sequence."""

from __future__ import annotations

import streamlit as st

from attnlens.analysis.agreement import paper_table
from attnlens.analysis.experiments.catalog import Outcome, explain_input, peek
from attnlens.analysis.experiments.induction import TARGET_RATIO, TARGET_SCORE, two_heads
from attnlens.app.web import show
from attnlens.app.web.downloads import button, text_writer
from attnlens.app.web.experiments.turns import run_in_turn
from attnlens.app.web.pickers import memo
from attnlens.app.web.safe_text import md
from attnlens.model.lenses.lens import Lens
from attnlens.record.trace import Trace
from attnlens.viz.experiments.alignment_view import alignment_chart
from attnlens.viz.experiments.experiment_summary import summary_table
from attnlens.viz.experiments.explanation_view import explanation_view
from attnlens.viz.experiments.importance_view import importance_chart, pruning_curve
from attnlens.viz.experiments.induction_view import induction_heads_view, induction_scores_chart


def cached_or_none(
    lens: Lens, name: str, n: int, seed: int, scores_only: bool = False
) -> Outcome | None:
    """The result if this session or the on-disk cache holds it (scores_only: catalog.peek's)."""
    held = st.session_state.get("_experiment_outcome")
    if held is not None and held[0] == (lens.fingerprint(), name, n, seed):
        return held[1]  # type: ignore[no-any-return]
    try:
        return peek(lens, name, n, seed, scores_only)
    except ValueError:
        return None


def provenance(outcome: Outcome) -> None:
    r = outcome.result
    took = "" if r.seconds is None else f"computed in {r.seconds:.1f} s"
    where = f"read from the cache ({took})" if outcome.cached else took
    st.caption(md(f"{r.model}: {r.params.get('n')} inputs, seed {r.params.get('seed')}; {where}."))
    for note in r.notes:
        st.info(md(note))


def downloads(outcome: Outcome, key: str) -> None:
    r = outcome.result
    show.table(r.heads, f"{key}_heads", f"{r.experiment}-{r.model}-heads")
    text = r.to_json(indent=2)  # a result is a few kilobytes: heads × a few numbers
    button(
        "Download result (JSON)", text_writer(lambda: [text]), len(text.encode()),
        f"{r.experiment}-{r.model}.json", "application/json", f"{key}_json",
    )  # fmt: skip


def summary_lines(outcome: Outcome) -> None:
    """The summary as one line per measure, in words (viz.experiment_summary)."""
    table = summary_table(outcome.result)
    if len(table):
        st.dataframe(table, hide_index=True)


def induction_figures(lens: Lens, outcome: Outcome, trace: Trace, key: str) -> None:
    """The two heads on the current input, and every head by its two scores."""
    r = outcome.result
    kind = lens.info.self_kind
    prev, ind = two_heads(r)
    s = r.summary
    met = s.get("targets_met")
    line = (
        f"On {s.get('sequences', '')} random blocks of tokens said twice: the sharpest induction "
        f"head is {ind[0]}.{ind[1]} (score {s['induction_score']:.3f}), the sharpest "
        f"previous-token head {prev[0]}.{prev[1]} ({s['previous_token_score']:.3f})"
    )
    if "copy_loss_ratio" in s:
        line += (
            f"; loss on the second copy {s['second_copy_loss']:.3f} nats = "
            f"{s['copy_loss_ratio']:.1%} of the first ({s['first_copy_loss']:.3f})"
        )
    if met is not None:
        line += (
            f". An induction circuit by these numbers (both scores at least {TARGET_SCORE}, "
            f"the heads in different layers, the second copy's loss at most {TARGET_RATIO:.0%} "
            f"of the first's): {'yes' if met else 'no'}"
        )
    st.markdown(md(line + ". The figure: the same two heads on this input."))
    try:
        fig = induction_heads_view(trace, prev, ind, kind)
    except ValueError as err:
        st.info(md(err))
    else:
        show.figure(fig, f"{key}_two_heads", f"induction-heads-{r.model}")
    show.figure(induction_scores_chart(r), f"{key}_scores", f"induction-scores-{r.model}")


def induction_section(lens: Lens) -> Outcome | None:
    """Heads page: the section's title and the scores of the model's induction and
    previous-token heads, from the cache or measured under a progress bar (induction_figures
    draws them); None where there are none (a model of two sequences, or not asked)."""
    if lens.capabilities.takes_target:  # induction reads one sequence
        return None
    st.header("Induction heads")
    st.caption(
        "Olsson et al. (2022): a previous-token head marks each position with the token before "
        "it; an induction head then looks back one after the earlier match of the current token. "
        "Scores are measured on random tokens repeated twice, once per model and kept (the "
        "Experiments page also ablates each head in turn: minutes on a large model)."
    )
    n, seed = 100, 0
    outcome = cached_or_none(lens, "induction", n, seed, scores_only=True)
    if outcome is None:  # a decoder is measured at once (seconds); others on request
        asked = lens.capabilities.decodes
        if asked or st.button("Find induction heads", key="w_find_induction"):
            outcome = run_in_turn(lens, "induction", n, seed, scores_only=True)
    return outcome


def result_view(lens: Lens, outcome: Outcome, trace: Trace | None, text: str) -> None:
    """One experiment's summary, figure, tables and downloads."""
    r = outcome.result
    provenance(outcome)
    summary_lines(outcome)
    if r.experiment == "induction" and trace is not None:
        induction_figures(lens, outcome, trace, "exp_induction")
    elif r.experiment == "importance":
        if "pruning" in r.tables:
            show.figure(pruning_curve(r), "exp_pruning", f"pruning-{r.model}")
        show.figure(importance_chart(r), "exp_importance", f"importance-{r.model}")
        for name, table in r.tables.items():
            with st.expander(name.replace("_", " ")):
                show.table(table, f"exp_table_{name}", f"{name}-{r.model}")
    elif r.experiment == "explanation":
        explanation_figures(lens, outcome, text)
    elif r.experiment == "alignment":
        show.figure(alignment_chart(r), "exp_alignment", f"alignment-{r.model}")
    st.subheader("Every head")
    downloads(outcome, "exp")


def explanation_figures(lens: Lens, outcome: Outcome, text: str) -> None:
    r = outcome.result
    key = (lens.fingerprint(), r.params.get("n"), r.params.get("seed"), text)
    try:
        case, table = memo("explain_input", key, lambda: explain_input(lens, r, text))
    except ValueError as err:
        st.info(md(err))
        table = r.tables["spearman"]
    else:
        show.figure(explanation_view(case, table), "exp_explanation", f"explanation-{r.model}")
        flow = table[table["method"] == "flow"]["this_input"]
        skipped = " Flow is left out on this input: too many positions to follow in time." * bool(
            flow.isna().all()
        )
        st.caption(
            md(
                f"This input: the output token {case.output_token!r} (log p {case.logprob:.3f}) "
                f"predicted at position {case.output_position}; each input token erased in "
                f"turn.{skipped}"
            )
        )
    st.markdown("Spearman's ρ with erasure, held-out mean ± std (as in Abnar & Zuidema, Table 1):")
    st.dataframe(paper_table(table), hide_index=True)
    if "this_input" in table:
        st.markdown("… and on this input:")
        st.dataframe(paper_table(table, "this_input"), hide_index=True)
    show.table(table, "exp_spearman", f"explanation-spearman-{r.model}")
