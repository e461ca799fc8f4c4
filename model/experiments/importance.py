"""Head importance and pruning (Michel et al. 2019; Voita et al. 2019).

Each head is ablated alone (its output zeroed through the model's own head mask) and the drop
in the model's score is its importance: on a task model the exact match (greedy) and the
teacher-forced log-likelihood of held-out examples, on a decoder the log-likelihood of held-out
text. Voita's confidence is the mean of each query's largest attention weight. The pruning
curve removes heads least important first and measures again (greedy and beam search), over all
heads and within each kind of attention.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from attnlens.model.decoding.heads import HeadKind, HeadRef
from attnlens.model.experiments.common import (
    KIND_OF,
    Progress,
    all_heads,
    check_n,
    chunks,
    head_table,
    kinds_of,
    no_progress,
)
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.runs import Search, TokenBatch, TokenRun
from attnlens.model.training.tasks import get_task
from attnlens.model.training.tasks.base import Example
from attnlens.record.errors import InputError
from attnlens.record.experiment import ExperimentResult

BATCH = 32  # texts per forward pass on a decoder
LOST_POINTS = 0.01  # issue 15: heads that can go with at most 1 point of exact match lost


@dataclass(frozen=True)
class Score:
    """What the model scores on the input set with some heads ablated."""

    exact: float  # share of exact answers (NaN on a decoder)
    loglik: float  # mean log-likelihood per token


Scorer = Callable[[Sequence[HeadRef], Search], Score]


def task_scorer(lens: Lens, examples: Sequence[Example]) -> Scorer:
    """Exact match and log-likelihood per reference token of a task model's examples."""

    def score(ablate: Sequence[HeadRef], search: Search) -> Score:
        s = lens.task_scores(examples, ablate, search)
        return Score(float(s.exact.mean()), float(s.loglik.sum() / s.tokens.sum()))

    return score


def text_scorer(lens: Lens, texts: Sequence[str]) -> Scorer:
    """Log-likelihood per token of texts, each read as one sequence."""
    ids = [lens.token_ids(t) for t in texts]

    def score(ablate: Sequence[HeadRef], search: Search) -> Score:
        total, count = 0.0, 0
        for part in chunks(ids, BATCH):
            lp = lens.run_tokens(TokenBatch(list(part)), ablate).logprobs
            assert lp is not None, "a decoder gives log-probabilities"
            total, count = total + float(np.nansum(lp)), count + int(np.isfinite(lp).sum())
        return Score(float("nan"), total / max(count, 1))

    return score


def confidence(runs: Sequence[TokenRun], heads: Sequence[HeadRef]) -> np.ndarray:
    """Voita et al.: per head, the mean over real query positions of the largest weight."""
    out = []
    for ref in heads:
        kind = KIND_OF[ref.kind]
        tops = [getattr(r, kind)[:, ref.layer, ref.head].max(-1) for r in runs]  # (B, Q) each
        flat = np.concatenate([t.ravel() for t in tops])
        out.append(float(np.nanmean(flat)))
    return np.array(out)


def check_applies(lens: Lens) -> None:
    """An InputError unless the model has a score a head could lower, or is an encoder."""
    if lens.task_name is None and lens.info.architecture == "encoder-decoder":
        raise InputError(
            f"{lens.name} has no score to lose: importance is measured on our task models "
            "(exact match, log-likelihood), on decoders (log-likelihood of text), and as "
            "confidence alone on encoders"
        )


def measure_importance(
    lens: Lens,
    n: int = 100,
    seed: int = 0,
    progress: Progress = no_progress,
    beam: bool = True,
    pruning: bool = True,
) -> ExperimentResult:
    """Every head's importance and confidence, and (with pruning) the pruning curves."""
    started = time.perf_counter()
    n, heads = check_n(n), all_heads(lens.info)
    task, arch, reason = lens.task_name, lens.info.architecture, lens.why_no_ablation()
    check_applies(lens)
    examples = get_task(task).examples(n, seed) if task is not None else None
    texts = [e.source for e in examples] if examples else lens.sample_texts(n, seed)
    runs = _attention_runs(lens, examples, texts)
    conf = confidence(runs, heads)
    params = {
        "n": len(texts),
        "seed": seed,
        "beam": beam,
        "pruning": pruning,
        "fingerprint": lens.fingerprint(),
    }
    if reason is not None or arch == "encoder":
        note = f"only Voita's confidence is measured on {lens.name}: " + (
            reason or "an encoder-only model predicts nothing whose score a head could lower"
        )
        nan = np.full(len(heads), np.nan)
        table = head_table(heads, importance=nan, exact_drop=nan, confidence=conf)
        return ExperimentResult(
            "importance",
            lens.name,
            params,
            table,
            {},
            {},
            (note,),
            time.perf_counter() - started,
        )
    scorer = task_scorer(lens, examples) if examples else text_scorer(lens, texts)
    beam = beam and pruning and examples is not None
    plan = _Plan(len(heads), beam, len(kinds_of(lens.info)) if pruning else 0, progress, pruning)
    base = scorer([], "greedy")
    plan.tick("scoring the whole model")
    singles = []
    for ref in heads:
        singles.append(scorer([ref], "greedy"))
        plan.tick(f"ablating {ref}")
    importance = np.array([base.loglik - s.loglik for s in singles])
    exact_drop = np.array([base.exact - s.exact for s in singles])
    order = [heads[i] for i in np.lexsort((-conf, exact_drop, importance))]  # least first
    table = head_table(heads, importance=importance, exact_drop=exact_drop, confidence=conf)
    table["prune_rank"] = [order.index(h) for h in heads]
    tables: dict[str, pd.DataFrame] = {}
    summary: dict[str, object] = {
        "heads": len(heads),
        "loglik": base.loglik,
        "exact_greedy": base.exact,
    }
    if pruning:
        curve = _pruning(scorer, order, plan, beam)
        by_kind = _pruning_by_kind(scorer, order, plan)
        tables = {"pruning": curve, "pruning_by_kind": by_kind}
        summary = _summary(base, curve, by_kind, examples is not None)
    if examples is None:
        summary.pop("exact_greedy", None)
    return ExperimentResult(
        "importance",
        lens.name,
        params,
        table,
        summary,
        tables,
        (),
        time.perf_counter() - started,
    )


class _Plan:
    """Counts the scoring runs ahead, for the progress bar."""

    def __init__(
        self, heads: int, beam: bool, kinds: int, progress: Progress, curves: bool
    ) -> None:
        self.progress, self.done = progress, 0
        curve = (heads + 1) * (2 if beam else 1) if curves else 0
        self.total = 1 + heads + curve + (heads if kinds > 1 else 0)

    def tick(self, what: str) -> None:
        self.done += 1
        self.progress(self.done, self.total, what)


def _attention_runs(
    lens: Lens, examples: Sequence[Example] | None, texts: Sequence[str]
) -> list[TokenRun]:
    """The model's attention on the input set (task models: teacher-forced on the reference)."""
    runs = []
    if examples is not None:
        space = lens.token_space()
        assert space.start is not None, "a task model is an encoder-decoder"
        for part in chunks(examples, 128):
            tokens = [(space.start, *lens.token_ids(e.target)) for e in part]
            runs.append(
                lens.run_tokens(TokenBatch(tokens, [lens.token_ids(e.source) for e in part]))
            )
        return runs
    ids = [lens.token_ids(t) for t in texts]
    return [lens.run_tokens(TokenBatch(list(part))) for part in chunks(ids, BATCH)]


def _pruning(scorer: Scorer, order: Sequence[HeadRef], plan: _Plan, beam: bool) -> pd.DataFrame:
    """Score after removing the first k heads of order, for k = 0 .. all."""
    rows = []
    for k in range(len(order) + 1):
        greedy = scorer(order[:k], "greedy")
        plan.tick(f"pruning {k} of {len(order)} heads (greedy)")
        row = {
            "heads_removed": k,
            "fraction_pruned": k / len(order),
            "removed": str(order[k - 1]) if k else "",
            "exact_greedy": greedy.exact,
            "loglik": greedy.loglik,
            "exact_beam": float("nan"),
        }
        if beam:
            row["exact_beam"] = scorer(order[:k], "beam").exact
            plan.tick(f"pruning {k} of {len(order)} heads (beam)")
        rows.append(row)
    return pd.DataFrame(rows)


def _pruning_by_kind(scorer: Scorer, order: Sequence[HeadRef], plan: _Plan) -> pd.DataFrame:
    """Michel et al.'s per-kind curves: heads of one kind removed, least important first,
    the others kept (greedy)."""
    kinds: list[HeadKind] = list(dict.fromkeys(h.kind for h in order))
    rows: list[dict[str, object]] = []
    if len(kinds) < 2:
        return pd.DataFrame(
            rows, columns=["kind", "heads_removed", "fraction_pruned", "exact_greedy", "loglik"]
        )
    for kind in kinds:
        mine = [h for h in order if h.kind == kind]
        for k in range(1, len(mine) + 1):
            s = scorer(mine[:k], "greedy")
            plan.tick(f"pruning {k} {kind} heads")
            rows.append(
                {
                    "kind": KIND_OF[kind],
                    "heads_removed": k,
                    "fraction_pruned": k / len(mine),
                    "exact_greedy": s.exact,
                    "loglik": s.loglik,
                }
            )
    return pd.DataFrame(rows)


def prunable(curve: pd.DataFrame, column: str) -> int:
    """How many heads go, least important first, before more than 1 point of exact match is
    lost (the first k whose score falls further, minus one)."""
    scores = curve[column].to_numpy()
    lost = np.nonzero(scores < scores[0] - LOST_POINTS - 1e-12)[0]
    return int(lost[0] - 1) if lost.size else len(scores) - 1


def _summary(
    base: Score, curve: pd.DataFrame, by_kind: pd.DataFrame, task: bool
) -> dict[str, object]:
    heads = len(curve) - 1
    out: dict[str, object] = {"heads": heads, "loglik": base.loglik}
    if task:
        out |= {"exact_greedy": base.exact, "prunable_greedy": prunable(curve, "exact_greedy")}
        if curve["exact_beam"].notna().all():
            out |= {
                "exact_beam": float(curve["exact_beam"].iloc[0]),
                "prunable_beam": prunable(curve, "exact_beam"),
            }
    if len(by_kind):
        last = by_kind.groupby("kind").tail(1).set_index("kind")
        out["exact_all_of_kind_removed"] = last["exact_greedy"].to_dict()
        out["loglik_all_of_kind_removed"] = last["loglik"].to_dict()
    return out
