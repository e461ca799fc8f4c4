"""`attnlens eval MODEL`: exact match and per-head alignment on fresh held-out examples of a
task model's task; for the language model `lm`, per-character perplexity on its held-out
sentences against a unigram baseline."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from model import load
from model.corpus import load_corpus
from model.errors import InputError
from model.evaluate import evaluate
from model.lm import LMLens
from model.seq2seq import Seq2SeqLens
from model.tasks import TASKS, get_task
from model.train_lm import perplexity

DEFAULT_SEED = 20_000  # training's held-out set uses 10_000 + its seed; these differ


@dataclass(frozen=True)
class EvalReport:
    """What `attnlens eval` measured on one model."""

    model: str
    task: str
    n: int
    seed: int
    exact: float
    head_alignment: list[list[float]]  # (N, h): share of target tokens aligned by each head
    best_head: tuple[int, int]  # (layer, head)
    best_head_alignment: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "best_head": list(self.best_head)}


@dataclass(frozen=True)
class PerplexityReport:
    """What `attnlens eval` measured on our language model."""

    model: str
    task: str
    n: int  # held-out sentences
    perplexity: float  # per character, the end token included
    unigram_perplexity: float  # character frequencies of the training sentences

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def run_eval(
    name: str, n: int = 1000, seed: int = DEFAULT_SEED, device: str = "auto"
) -> EvalReport | PerplexityReport:
    """Score a model trained on one of our tasks on n fresh examples of that task, or our
    language model on (up to n of) its held-out sentences."""
    if n < 1:
        raise InputError(f"--n must be at least 1, got {n}")
    lens = load(name, device=device)
    if isinstance(lens, LMLens):
        corpus = load_corpus()
        held_out = corpus.held_out[:n]
        ppl = perplexity(lens.net, lens.tokenizer, held_out, corpus.train)
        return PerplexityReport(lens.name, "lm", len(held_out), ppl.model, ppl.unigram)
    task_name = lens.meta.get("task") if isinstance(lens, Seq2SeqLens) else None
    if (
        not isinstance(lens, Seq2SeqLens)
        or not isinstance(task_name, str)
        or task_name not in TASKS
    ):
        raise InputError(
            f"{name!r} was not trained on one of our tasks ({', '.join(TASKS)}) nor is it "
            "our language model lm"
        )
    result = evaluate(lens.net, lens.tokenizer, get_task(str(task_name)).examples(n, seed))
    return EvalReport(
        lens.name,
        str(task_name),
        result.n,
        seed,
        result.exact,
        result.head_alignment.round(4).tolist(),
        result.best_head,
        result.best_alignment,
    )


def format_report(report: EvalReport | PerplexityReport) -> str:
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


def report_text(report: EvalReport | PerplexityReport, as_json: bool) -> str:
    """What the command prints."""
    return json.dumps(report.to_dict(), indent=2) if as_json else format_report(report)
