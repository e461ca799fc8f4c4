"""A public server's limits on experiments without Streamlit (app/server/experiment_turns.py): the
bound on n and the rate in one line each, one run at a time in the order asked, a run that leaves
the line however it ends, at a lower priority than the keystrokes beside it."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from attnlens.analysis.experiments.common import Progress
from attnlens.app.server.experiment_turns import (
    NICE,
    SERVER_INTERVAL_S,
    SERVER_MAX_N,
    BackgroundRun,
    ExperimentQueue,
    ServerLimits,
    ordinal,
    waiting_line,
)


def test_n_over_the_bound_is_refused_in_one_line_naming_the_value_and_the_limit() -> None:
    limits = ServerLimits()
    assert limits.n_refusal(SERVER_MAX_N) is None and limits.n_refusal(1) is None
    message = limits.n_refusal(2000)
    assert message is not None and "\n" not in message
    assert "n=2000" in message and f"at most {SERVER_MAX_N}" in message


def test_a_session_starts_one_experiment_per_interval_after_its_last_ended() -> None:
    limits = ServerLimits(interval_s=60)
    assert limits.rate_refusal(None, 1000.0) is None  # never ran one
    assert limits.rate_refusal(1000.0, 1060.0) is None
    message = limits.rate_refusal(1000.0, 1018.0)
    assert message is not None and "\n" not in message
    assert "every 60 s" in message and "in 42 s" in message


def test_the_limits_come_from_the_environment_and_bad_values_keep_the_defaults() -> None:
    env = {"ATTNLENS_EXPERIMENT_MAX_N": "300", "ATTNLENS_EXPERIMENT_INTERVAL_S": "0"}
    assert ServerLimits.from_env(env) == ServerLimits(300, 0)
    bad = {"ATTNLENS_EXPERIMENT_MAX_N": "0", "ATTNLENS_EXPERIMENT_INTERVAL_S": "-5"}
    assert ServerLimits.from_env(bad) == ServerLimits(SERVER_MAX_N, SERVER_INTERVAL_S)


def test_the_queue_runs_one_at_a_time_in_the_order_asked() -> None:
    queue = ExperimentQueue()
    a, b, c = queue.join(), queue.join(), queue.join()
    assert [queue.place(t) for t in (a, b, c)] == [0, 1, 2] and queue.waiting() == 2
    assert queue.wait(b, 0.05) == 1  # not its turn while a runs
    queue.leave(b)  # b's visitor stopped waiting: c moves up
    assert queue.place(c) == 1
    queue.leave(a)
    assert queue.wait(c, 0.05) == 0 and queue.waiting() == 0


def test_a_waiting_visitor_is_woken_when_the_run_ahead_ends() -> None:
    queue = ExperimentQueue()
    running, waiting = queue.join(), queue.join()
    threading.Timer(0.2, queue.leave, (running,)).start()
    started = time.monotonic()
    assert queue.wait(waiting, 5.0) == 0
    assert time.monotonic() - started < 2.0


def test_the_waiting_line_names_the_place() -> None:
    assert [ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st",
    ]  # fmt: skip
    assert "2nd in line" in waiting_line(2) and "one experiment at a" in waiting_line(2)


def test_a_background_run_leaves_the_queue_when_it_ends_and_hands_back_its_result() -> None:
    queue = ExperimentQueue()
    ticket, after = queue.join(), queue.join()

    def work(report: Progress) -> str:
        report(1, 2, "half")
        return "done"

    run = BackgroundRun(work, queue, ticket)
    assert run.wait(5.0) and run.result == "done" and run.error is None
    assert run.progress == (1, 2, "half") and queue.place(after) == 0


def test_a_cancelled_run_stops_at_its_next_step_and_frees_the_server() -> None:
    queue = ExperimentQueue()
    ticket, after = queue.join(), queue.join()
    steps: list[int] = []

    def work(report: Progress) -> None:
        for i in range(1000):
            steps.append(i)
            report(i, 1000, "step")
            time.sleep(0.01)

    run = BackgroundRun(work, queue, ticket)
    time.sleep(0.1)
    run.cancel()
    assert run.wait(5.0) and len(steps) < 1000
    assert run.error is not None and queue.place(after) == 0


def test_an_error_in_the_run_is_handed_to_the_page_and_the_turn_ends() -> None:
    queue = ExperimentQueue()
    ticket = queue.join()

    def work(report: Progress) -> None:
        raise ValueError("n must be between 1 and 2000, got 0")

    run = BackgroundRun(work, queue, ticket)
    assert run.wait(5.0) and isinstance(run.error, ValueError) and queue.waiting() == 0
    assert queue.place(queue.join()) == 0


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
def test_the_run_computes_at_a_lower_priority_than_the_server() -> None:
    queue = ExperimentQueue()
    here = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def work(report: Progress) -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    run = BackgroundRun(work, queue, queue.join())
    assert run.wait(5.0) and run.result == max(here, NICE)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == here  # ours unchanged
