"""`attnlens eval MODEL [--suite held-out|hard]`: exact match and per-head alignment on fresh
examples of a task model's task, or on each kind of its hard suite; for the language model `lm`,
per-character perplexity on its held-out sentences (or each hard kind) against a unigram
baseline."""

from __future__ import annotations

import argparse
import json
from typing import Any

import attnlens
from attnlens.model.training.reports import SUITES, PerplexityReport, Report, TaskReport
from attnlens.record.errors import InputError

DEFAULT_SEED = 20_000  # training's held-out set uses 10_000 + its seed; these differ


def format_report(report: Report) -> str:
    """The report as a short table for a terminal."""
    if isinstance(report, PerplexityReport):
        return _perplexity_text(report)
    layer, head = report.best_head
    heads = len(report.head_alignment[0])
    lines = [_task_title(report), *_kinds_table(report)]
    lines += [
        f"exact match{' (every kind)' * bool(report.kinds)}: {report.exact:.1%}",
        "cross-attention alignment (argmax over the source is the true source token):",
        "         " + "".join(f"{'head ' + str(h):>9}" for h in range(heads)),
    ]
    for i, row in enumerate(report.head_alignment):
        lines.append(f"layer {i:<3}" + "".join(f"{v:>9.1%}" for v in row))
    lines.append(f"best head: layer {layer} head {head}, {report.best_head_alignment:.1%} aligned")
    return "\n".join(lines)


def _task_title(report: TaskReport) -> str:
    where = f"{report.model} (task {report.task})"
    if report.suite == "hard":
        per_kind = report.kinds[0].n if report.kinds else 0
        return (
            f"{where}: hard suite, {len(report.kinds)} kinds × {per_kind} examples "
            f"({report.n} in all), seed {report.seed}"
        )
    return f"{where}: {report.n} held-out examples, seed {report.seed}"


def _kinds_table(report: TaskReport) -> list[str]:
    """One line per kind of the hard suite: exact match and its best head."""
    if not report.kinds:
        return []
    width = max(len(k.kind) for k in report.kinds) + 2
    lines = [f"{'kind':<{width}}{'exact':>8}   best head (aligned)"]
    for k in report.kinds:
        layer, head = k.best_head
        lines.append(
            f"{k.kind:<{width}}{k.exact:>8.1%}   layer {layer} head {head} "
            f"({k.best_head_alignment:.1%})"
        )
    return lines


def _perplexity_text(report: PerplexityReport) -> str:
    ratio = report.unigram_perplexity / report.perplexity
    if report.suite == "hard":
        title = f"{report.model} (language model): hard suite of its held-out sentences"
    else:
        title = (
            f"{report.model} (language model): {report.n} held-out sentences of Python's help text"
        )
    lines = [f"{title} (a fixed split: --seed does not apply)"]
    if report.kinds:
        width = max(len(k.kind) for k in report.kinds) + 2
        lines.append(f"{'kind':<{width}}{'sentences':>10}{'perplexity':>12}{'unigram':>10}")
        lines += [
            f"{k.kind:<{width}}{k.n:>10}{k.perplexity:>12.2f}{k.unigram_perplexity:>10.2f}"
            for k in report.kinds
        ]
    every = " (every kind)" if report.kinds else ""
    lines += [
        f"per-character perplexity{every}: {report.perplexity:.2f}",
        f"unigram baseline: {report.unigram_perplexity:.2f} ({ratio:.1f}× the model's)",
    ]
    return "\n".join(lines)


def report_text(report: Report, as_json: bool) -> str:
    """What the command prints."""
    return json.dumps(report.to_dict(), indent=2) if as_json else format_report(report)


def add_eval_parser(sub: Any) -> None:
    evaluate = sub.add_parser(
        "eval", help="exact match and head alignment of a task model; perplexity of lm"
    )
    evaluate.add_argument("model", metavar="MODEL")
    evaluate.add_argument(
        "--suite",
        choices=SUITES,
        default="held-out",
        help="held-out: fresh examples like training's; hard: repeats, edge lengths, mixed case "
        "and the longest input, each kind on its own line (default: held-out)",
    )
    evaluate.add_argument(
        "--n", type=int, default=1000, help="examples (per kind for --suite hard; default: 1000)"
    )
    evaluate.add_argument("--seed", type=int, help="seed of the examples (default: 20000)")
    evaluate.add_argument("--json", action="store_true", help="print JSON instead of a table")
    evaluate.add_argument(
        "--device", default="auto", help="auto, cpu, cuda or cuda:N (default: auto)"
    )


def cmd_eval(args: argparse.Namespace) -> None:
    seed = DEFAULT_SEED if args.seed is None else args.seed
    can = attnlens.load(args.model, device=args.device).capabilities
    if can.evaluation is None:
        raise InputError(can.reason("evaluation"))
    report = can.evaluation.evaluate(args.n, seed, args.suite)
    print(report_text(report, args.json))
