"""`make bench`: every benchmark, each printing its own table, then every target of issue 20 with
its ratio against the reference measured in the same run and ✓ or ✗, and the machine's load.

    .venv/bin/python -m bench [--repeats 7] [--quick]

--quick: 3 repeats and a short load check, for a first look (a few minutes less).
"""

from __future__ import annotations

import argparse
import time

from bench import (
    app_latency,
    breakdown,
    class_capacity,
    class_flood,
    class_follow,
    decode_speed,
    experiment_load,
    experiments_speed,
    explore_long,
    exports,
    first_visits,
    load_check,
    long_inputs,
    memory_load,
    norms_cost,
    servers,
    token_sets,
    viz_speed,
)
from bench.app_latency import Result
from bench.targets import Target, load_average, table

IN_SERVER = 0  # ATTNLENS_TRACE_WORKERS for the comparison: every trace made in the server


def section(title: str) -> None:
    print(f"\n== {title} ({load_average()})", flush=True)


def latency_targets(found: list[Result]) -> list[Target]:
    """The issue's latency targets from the browser scenarios (by their names)."""
    out = []
    for r in found:
        ours, bare = r.median("ours"), r.median("reference")
        if r.name.startswith("First visit from the open app"):
            out.append(Target(r.name + " (≤ 2 s)", r.median("ours", "full"), 2.0))
        elif r.name.startswith("First visit"):
            continue  # a fresh tab: printed beside the bare page's (app_latency.table)
        elif "512 tokens" in r.name:
            out.append(Target(r.name + " (≤ 2 s)", r.median("ours", "full"), 2.0))
        elif "minilm: Enter" in r.name:
            out.append(Target(r.name + " vs bare", ours, 1.5, bare))
        else:
            out.append(Target(r.name + " vs bare", ours, 1.2, bare))
    return out


def main(argv: list[str] | None = None) -> None:
    servers.in_server_environment("bench", argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=app_latency.REPEATS)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else args.repeats
    started = time.perf_counter()
    section("decoding speed")
    decode_speed.main()
    section("figure speed")
    viz_speed.main()
    section("server time per rerun: where it goes (in-process, the real pages)")
    found = breakdown.results(repeats)
    print(breakdown.table(found, "wall"))
    print(breakdown.table(found, "cpu"))
    print(breakdown.thread_table(breakdown.thread_rows()))
    section("app latency in Chromium: attnlens against the bare Streamlit page")
    latency = app_latency.results(repeats)
    print(app_latency.table(latency))
    section("a class on one machine")
    levels = (1, 4, 8, 16) if args.quick else load_check.LEVELS
    keystrokes = 4 if args.quick else load_check.KEYSTROKES
    swept = load_check.sweep("reverse", levels, keystrokes)  # as `attnlens serve` starts
    print(load_check.table(swept, "reverse"))
    compared = levels if args.quick else tuple(n for n in levels if n >= 8)
    in_server = load_check.sweep("reverse", compared, keystrokes, IN_SERVER)
    print(load_check.table(in_server, "reverse", IN_SERVER))
    section("exports")
    print(exports.table(exports.rows()))
    section("a live class (issue 14): answers per second and students one server holds")
    class_capacity.main(["--sizes", "5", "10"] if args.quick else [])
    section("a lecture hall (issue 37): 300 students as bare clients on one attnlens serve")
    class_follow.main(["--students", "50", "--idle", "10", "--moves", "2"] if args.quick else [])
    section("a flood on the answer route (issue 45): another student's answer beside it")
    class_flood.main([])
    section("memory: N sessions on minilm at 510 tokens (issue 17)")
    memory_load.main([])
    section("an experiment running on a public server: Explore keystrokes beside it (issue 39)")
    experiment_load.main([])
    section("the head experiments in seconds: importance against one head at a time (issue 40)")
    experiments_speed.main([])
    section("every head at long inputs: attnlens' trace against the sdpa forward (issue 35)")
    long_targets = long_inputs.main(["--quick"] if args.quick else [])
    print(table(long_targets))
    section("what recording the norms adds to a trace (issue 47): with them against without")
    print(table(norms_cost.main(["--repeats", "1" if args.quick else "3"])))
    section("a token set's attention in every head, from the record (issue 36)")
    token_sets.main(["--quick"] if args.quick else [])
    section("Explore at 1,024 and 8,192 tokens: Enter, another head, a zoom (issue 36)")
    explore_long.main(["--repeats", "2", "--case", "gpt2"] if args.quick else [])
    if not args.quick:
        section("work a page needs once: Heads on a new model, a long link reopened (issue 49)")
        first_visits.main([])
    section(f"targets of issue 20 (make bench, {time.perf_counter() - started:.0f} s)")
    held = load_check.largest_held(swept)
    targets = [
        *latency_targets(latency),
        Target("A class: sessions typing with p95 ≤ 1 s (reverse, as started)", held, 16,
               unit="n", at_least=True),
    ]  # fmt: skip
    print(table(targets))


if __name__ == "__main__":
    main()
