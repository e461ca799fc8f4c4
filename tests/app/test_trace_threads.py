"""A trace made in the server takes the cores while it runs alone and shares them with traces
running meanwhile (app/server/trace_threads.py), and puts the server's count back after."""

from __future__ import annotations

import threading

import torch

from attnlens.app.server.trace_threads import TraceThreads


def test_a_trace_alone_takes_every_core_and_two_at_once_share_them() -> None:
    threads = TraceThreads(cores=4, between=1)
    seen: dict[str, int] = {}
    second_started, first_may_end = threading.Event(), threading.Event()

    def second() -> None:
        with threads.running() as n:
            seen["second"], seen["second torch"] = n, torch.get_num_threads()
            second_started.set()
            first_may_end.wait(timeout=30)

    before = torch.get_num_threads()
    try:
        with threads.running() as n:
            seen["alone"], seen["alone torch"] = n, torch.get_num_threads()
            worker = threading.Thread(target=second)
            worker.start()
            assert second_started.wait(timeout=30)
            seen["third would get"] = threads.share()
            first_may_end.set()
            worker.join(timeout=30)
        assert torch.get_num_threads() == 1  # the server's count between traces
        assert threads.share() == 4
    finally:
        torch.set_num_threads(before)
    assert seen == {"alone": 4, "alone torch": 4, "second": 2, "second torch": 2,
                    "third would get": 2}  # fmt: skip
