"""An experiment run from the page, within what a public server allows (ATTNLENS_SERVER_MODE,
docs/deploying.md "Experiments on a server"): n bounded, one run at a time per server process with
the waiting visitor's place shown, one start per session per interval. Anywhere else it runs at
once, as before. The Experiments page and the Heads page's induction heads both run through here.
The logic is app/server/experiment_turns.py; this is its Streamlit side."""

from __future__ import annotations

import time

import streamlit as st

from attnlens.analysis.experiments.catalog import TITLES, Outcome, run_experiment
from attnlens.app.server.experiment_turns import (
    BackgroundRun,
    ExperimentQueue,
    ServerLimits,
    waiting_line,
)
from attnlens.app.web.safe_text import md
from attnlens.model.lenses.access import AccessPolicy
from attnlens.model.lenses.lens import Lens

POLL_S = 0.5  # how often a waiting visitor's place is refreshed


@st.cache_resource(show_spinner=False)
def experiment_queue() -> ExperimentQueue:
    """The one line of experiments shared by every session of this server process."""
    return ExperimentQueue()


def server_limits() -> ServerLimits | None:
    """The limits on experiments this deployment sets: None off a server."""
    return ServerLimits.from_env() if AccessPolicy.from_env().server_mode else None


def n_refusal(n: int) -> str | None:
    """Why this server will not run n inputs (one line), None if it will."""
    limits = server_limits()
    return None if limits is None else limits.n_refusal(n)


def run_with_progress(
    lens: Lens, name: str, n: int, seed: int, scores_only: bool = False
) -> Outcome | None:
    """Run the experiment under a progress bar; its message in place of bad input."""
    bar = st.progress(0.0, text=f"{TITLES[name]}: starting")

    def progress(done: int, total: int, what: str) -> None:
        bar.progress(min(1.0, done / max(total, 1)), text=md(f"{what} ({done} of {total})"))

    try:
        outcome = run_experiment(lens, name, n, seed, progress, scores_only=scores_only)
    except ValueError as err:
        bar.empty()
        st.info(md(err))
        return None
    bar.empty()
    remember(lens, name, n, seed, outcome, scores_only)
    return outcome


def remember(lens: Lens, name: str, n: int, seed: int, outcome: Outcome, scores_only: bool) -> None:
    """The session's last whole result, which the Experiments page shows (the scores alone,
    the Heads page's, are read back from the cache, never taken for the whole)."""
    if not scores_only:
        st.session_state["_experiment_outcome"] = ((lens.fingerprint(), name, n, seed), outcome)


def run_in_turn(
    lens: Lens, name: str, n: int, seed: int, scores_only: bool = False
) -> Outcome | None:
    """Run the experiment under a progress bar; on a server first within the limits and after
    the experiments ahead of it. A refusal is one line in place of the run. scores_only:
    run_experiment's (induction's scores without the ablations)."""
    limits = server_limits()
    if limits is None:
        return run_with_progress(lens, name, n, seed, scores_only)
    refusal = limits.n_refusal(n) or limits.rate_refusal(
        st.session_state.get("_experiment_ended"), time.monotonic()
    )
    if refusal is not None:
        st.info(md(refusal))
        return None
    queue, asked = experiment_queue(), time.monotonic()
    ticket, handed = queue.join(), False
    try:
        spot, place, ahead = st.empty(), queue.place(ticket), 0
        while place > 0:
            ahead = max(ahead, place)
            spot.info(md(waiting_line(place)))  # a closed tab or a rerun stops here, and leaves
            place = queue.wait(ticket, POLL_S)
        if ahead:
            spot.caption(md(f"Waited {time.monotonic() - asked:.0f} s for a turn ({ahead} ahead)."))
        run = BackgroundRun(
            lambda report: run_experiment(lens, name, n, seed, report, scores_only=scores_only),
            queue,
            ticket,
        )
        handed = True  # the run leaves the queue when it ends
        return _shown_while_running(run, (lens.fingerprint(), name, n, seed), scores_only)
    finally:
        if not handed:
            queue.leave(ticket)


def _shown_while_running(
    run: BackgroundRun[Outcome], key: tuple[str, str, int, int], scores_only: bool = False
) -> Outcome | None:
    """A progress bar while the run goes on; its outcome, or its message for bad input. A
    visitor who leaves cancels the run, which then frees the server at its next step."""
    bar = st.progress(0.0, text=f"{TITLES[key[1]]}: starting")
    try:
        while not run.wait(POLL_S):
            done, total, what = run.progress
            bar.progress(min(1.0, done / max(total, 1)), text=md(f"{what} ({done} of {total})"))
    finally:
        run.cancel()  # nothing when it has ended; else the visitor left mid-run
        if not isinstance(run.error, ValueError):  # a refusal of the input ran nothing
            st.session_state["_experiment_ended"] = time.monotonic()
    bar.empty()
    if isinstance(run.error, ValueError):
        st.info(md(run.error))
        return None
    if run.error is not None:
        raise run.error
    if not scores_only and run.result is not None:
        st.session_state["_experiment_outcome"] = (key, run.result)
    return run.result
