"""`attnlens eval MODEL`: exact match and per-head alignment on fresh held-out examples of a
task model's task; for the language model `lm`, per-character perplexity on its held-out
sentences against a unigram baseline."""

from __future__ import annotations

import json

from attnlens.model.training.evaluate import PerplexityReport, Report

DEFAULT_SEED = 20_000  # training's held-out set uses 10_000 + its seed; these differ


def format_report(report: Report) -> str:
    """The report as a short table for a terminal."""
    if isinstance(report, PerplexityReport):
        ratio = report.unigram_perplexity / report.perplexity
        return "\n".join(
            [
                f"{report.model} (language model): {report.n} held-out sentences of Python's "
                "help text (a fixed split: --seed does not apply)",
                f"per-character perplexity: {report.perplexity:.2f}",
                f"unigram baseline: {report.unigram_perplexity:.2f} ({ratio:.1f}× the model's)",
            ]
        )
    layer, head = report.best_head
    heads = len(report.head_alignment[0])
    lines = [
        f"{report.model} (task {report.task}): {report.n} held-out examples, seed {report.seed}",
        f"exact match: {report.exact:.1%}",
        "cross-attention alignment (argmax over the source is the true source token):",
        "         " + "".join(f"{'head ' + str(h):>9}" for h in range(heads)),
    ]
    for i, row in enumerate(report.head_alignment):
        lines.append(f"layer {i:<3}" + "".join(f"{v:>9.1%}" for v in row))
    lines.append(f"best head: layer {layer} head {head}, {report.best_head_alignment:.1%} aligned")
    return "\n".join(lines)


def report_text(report: Report, as_json: bool) -> str:
    """What the command prints."""
    return json.dumps(report.to_dict(), indent=2) if as_json else format_report(report)
