"""Heads against the known truth: on a model of one of our tasks the true source of every output
token is known, so each cross-attention head can be scored by how often its largest weight lands
there (alignment accuracy), layer by layer; and set beside the head's importance (importance.py):
are the aligned heads the ones the model cannot do without?
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from attnlens.analysis.experiments.common import (
    Progress,
    all_heads,
    applies,
    check_n,
    chunks,
    head_table,
    needed,
    no_progress,
)
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.token_runs import TokenBatch
from attnlens.model.training.tasks import get_task
from attnlens.record.errors import InputError
from attnlens.record.example import Example
from attnlens.record.experiment import ExperimentResult
from attnlens.record.stats import spearman

ALIGNED = 0.8  # as the Heads page tags an "alignment head"


def true_source_hits(cross: np.ndarray, alignments: Sequence[Sequence[int]]) -> np.ndarray:
    """(L, H) counts of output tokens whose cross-attention argmax is their true source.
    cross: (B, L, H, T, S), decoder position t predicting output token t; NaN rows (padding)
    are never hits."""
    argmax = np.nan_to_num(cross, nan=-1.0).argmax(-1)  # (B, L, H, T)
    hits = np.zeros(cross.shape[1:3], dtype=np.int64)
    for b, alignment in enumerate(alignments):
        truth = np.asarray(alignment, dtype=np.int64)
        if truth.size:
            hits += (argmax[b, :, :, : truth.size] == truth).sum(-1)
    return hits


def alignment_accuracy(lens: Lens, examples: Sequence[Example]) -> tuple[np.ndarray, int]:
    """(L, H): the share of reference target tokens whose cross-attention argmax (teacher-forced
    on the reference) is their true source token; and how many target tokens were scored."""
    can = lens.capabilities
    runs = needed(can.token_runs, can, "token_runs")
    space = runs.token_space()
    assert space.start is not None, "a task model is an encoder-decoder"
    hits, total = None, sum(len(e.alignment) for e in examples)
    if total == 0:
        raise InputError("none of the examples has an output token to align")
    for part in chunks(examples, 128):
        tokens = [(space.start, *runs.token_ids(e.target)) for e in part]
        run = runs.run_tokens(TokenBatch(tokens, [runs.token_ids(e.source) for e in part]))
        assert run.cross is not None
        found = true_source_hits(run.cross, [e.alignment for e in part])
        hits = found if hits is None else hits + found
    assert hits is not None
    return hits / total, total


def why_not(lens: Lens) -> str | None:
    """None where the model's alignment is known (a model of our tasks); else why not."""
    can = lens.capabilities
    if can.task is not None and can.takes_target:
        return None
    return (
        f"{lens.name} has no known alignment: it is known on models of our tasks (reverse, "
        "sort, dates, translate), whose examples say where each output token comes from"
    )


def check_alignable(lens: Lens) -> str:
    """The model's task, or an InputError saying why its alignment is unknown."""
    applies(why_not(lens))
    task = lens.capabilities.task
    assert task is not None, "why_not said the model has a task"
    return task.name


def measure_alignment(
    lens: Lens,
    importance: ExperimentResult,
    n: int = 200,
    seed: int = 0,
    progress: Progress = no_progress,
) -> ExperimentResult:
    """Every cross-attention head's alignment accuracy, beside its importance (a result of
    measure_importance on the same model)."""
    started = time.perf_counter()
    n, task = check_n(n), check_alignable(lens)
    progress(0, 1, "aligning cross-attention heads")
    accuracy, tokens = alignment_accuracy(lens, get_task(task).examples(n, seed))
    progress(1, 1, "aligning cross-attention heads")
    heads = all_heads(lens.info, ["cross"])
    scores = {
        c: [importance.score(c, "cross", h.layer, h.head) for h in heads]
        for c in ("importance", "exact_drop")
    }
    table = head_table(heads, aligned=accuracy.ravel(), **scores)
    per_layer = table.groupby("layer")["aligned"]
    at = int(np.argmax(table["aligned"].to_numpy()))
    best = table.iloc[at]
    rank = table["importance"].rank(ascending=False, method="min").iloc[at]
    summary = {
        "target_tokens": tokens,
        "best_aligned_head": [int(best["layer"]), int(best["head"])],
        "best_alignment": float(best["aligned"]),
        "best_aligned_head_importance_rank": int(rank),
        "alignment_heads": int((table["aligned"] >= ALIGNED).sum()),
        "mean_alignment_by_layer": per_layer.mean().round(4).tolist(),
        "best_alignment_by_layer": per_layer.max().round(4).tolist(),
        "spearman_alignment_importance": spearman(
            table["aligned"].to_numpy(), table["importance"].to_numpy()
        ),
    }
    params = {
        "n": n,
        "seed": seed,
        "fingerprint": lens.fingerprint(),
        "importance_n": importance.params.get("n"),
    }
    return ExperimentResult(
        "alignment", lens.name, params, table, summary, {}, (), time.perf_counter() - started
    )
