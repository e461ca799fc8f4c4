"""Head importance and pruning (Michel et al. 2019; Voita et al. 2019).

Each head is ablated alone (its output zeroed before W^O: our models through their head mask,
Hugging Face models in a private copy with the head's share of W^O zeroed) and the drop in the
model's score is its importance: on a task model the exact match (greedy) and the
teacher-forced log-likelihood of held-out examples, on a decoder the log-likelihood of held-out
text. An encoder-only model predicts no token, so its score is how much of its own output it
keeps: the cosine similarity of each token's last hidden state to the whole model's, 1 with no
head ablated. Voita's confidence is the mean of each query's largest attention weight. The
pruning curve removes heads least important first and measures again (greedy and beam search),
over all heads and within each kind of attention.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from attnlens.analysis.experiments.common import (
    Progress,
    all_heads,
    applies,
    check_n,
    chunks,
    head_table,
    kinds_of,
    needed,
    no_progress,
)
from attnlens.model.decoding.heads import HeadRef
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.parts import Ablation, TaskModel, TokenRuns
from attnlens.model.lenses.token_runs import Search, TokenBatch, TokenRun, TokenSpace
from attnlens.model.training.tasks import get_task
from attnlens.record.example import Example
from attnlens.record.experiment import ExperimentResult
from attnlens.record.trace import Kind

BATCH = 32  # texts per forward pass on a decoder
SORTED_BATCH = 16  # texts per forward pass when sorted by length: less padding, same speed
LOST_POINTS = 0.01  # issue 15: heads that can go with at most 1 point of exact match lost


@dataclass(frozen=True)
class Score:
    """What the model scores on the input set with some heads ablated."""

    exact: float  # share of exact answers (NaN on a decoder or an encoder)
    value: float  # mean log-likelihood per token; an encoder's output similarity


Scorer = Callable[[Sequence[Sequence[HeadRef]], Search], list[Score]]  # one per set of heads
GROUP = 12  # sets of ablated heads scored side by side between two progress reports


def task_scorer(task: TaskModel, examples: Sequence[Example], batched: bool = True) -> Scorer:
    """Exact match and log-likelihood per reference token of a task model's examples."""

    def score(ablations: Sequence[Sequence[HeadRef]], search: Search) -> list[Score]:
        if batched:
            many = task.task_scores_many(examples, ablations, search)
        else:
            many = [task.task_scores(examples, ablate, search) for ablate in ablations]
        return [Score(float(s.exact.mean()), float(s.loglik.sum() / s.tokens.sum())) for s in many]

    return score


Batches = Sequence[Sequence[tuple[int, ...]]]  # the texts' ids, a batch at a time


def output_scorer(ablation: Ablation, parts: Batches, batched: bool = True) -> Scorer:
    """An encoder-only model's output kept: the mean over tokens of the cosine similarity of
    each token's last hidden state to the whole model's on the same text."""
    whole = [_hidden(r) for r in _runs(ablation, parts, [()], batched)[0]]

    def score(ablations: Sequence[Sequence[HeadRef]], search: Search) -> list[Score]:
        out = []
        for ran in _runs(ablation, parts, ablations, batched):
            total, count = 0.0, 0
            for run, reference in zip(ran, whole, strict=True):
                similarity = cosine(_hidden(run), reference)  # (B, T)
                total += float(np.nansum(similarity))
                count += int(np.isfinite(similarity).sum())
            out.append(Score(float("nan"), total / max(count, 1)))
        return out

    return score


def text_scorer(ablation: Ablation, parts: Batches, batched: bool = True) -> Scorer:
    """Log-likelihood per token of texts, each read as one sequence."""

    def score(ablations: Sequence[Sequence[HeadRef]], search: Search) -> list[Score]:
        out = []
        for ran in _runs(ablation, parts, ablations, batched):
            total, count = 0.0, 0
            for run in ran:
                lp = run.logprobs
                assert lp is not None, "a decoder gives log-probabilities"
                total, count = total + float(np.nansum(lp)), count + int(np.isfinite(lp).sum())
            out.append(Score(float("nan"), total / max(count, 1)))
        return out

    return score


def _parts(runs: TokenRuns, texts: Sequence[str], batched: bool) -> list[list[tuple[int, ...]]]:
    """The texts' ids in batches; batched, shortest first in batches of SORTED_BATCH, so that
    a batch pads little (a score sums over every token, so the order does not change it)."""
    ids = [runs.token_ids(t) for t in texts]
    if not batched:
        return [list(part) for part in chunks(ids, BATCH)]
    return [list(part) for part in chunks(sorted(ids, key=len), SORTED_BATCH)]


def _runs(
    ablation: Ablation,
    parts: Batches,
    ablations: Sequence[Sequence[HeadRef]],
    batched: bool,
) -> list[list[TokenRun]]:
    """For each set of ablated heads, its run of each part: the sets side by side
    (`run_ablations`), or one set per forward pass (the reference the bench measures)."""
    out: list[list[TokenRun]] = [[] for _ in ablations]
    for part in parts:
        batch = TokenBatch(part)
        if batched:
            runs = ablation.run_ablations(batch, ablations)
        else:
            runs = [ablation.run_tokens(batch, ablate) for ablate in ablations]
        for mine, run in zip(out, runs, strict=True):
            mine.append(run)
    return out


def _hidden(run: TokenRun) -> np.ndarray:
    assert run.hidden is not None, "an encoder-only model gives its last hidden states"
    return run.hidden


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity along the last axis, (…, d) → (…); NaN where either is NaN."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    norms = np.linalg.norm(a64, axis=-1) * np.linalg.norm(b64, axis=-1)
    similarity: np.ndarray = (a64 * b64).sum(-1) / np.maximum(norms, np.finfo(np.float64).tiny)
    return similarity


def confidence(runs: Sequence[TokenRun], heads: Sequence[HeadRef]) -> np.ndarray:
    """Voita et al.: per head, the mean over real query positions of the largest weight."""
    out = []
    for ref in heads:
        tops = [getattr(r, ref.kind)[:, ref.layer, ref.head].max(-1) for r in runs]  # (B, Q) each
        flat = np.concatenate([t.ravel() for t in tops])
        out.append(float(np.nanmean(flat)))
    return np.array(out)


def why_not(lens: Lens) -> str | None:
    """None where the model has a score a head could lower, or is an encoder; else why not."""
    can = lens.capabilities
    if can.task is not None or not can.takes_target:
        return None
    return (
        f"{lens.name} has no score to lose: importance is measured on our task models "
        "(exact match, log-likelihood), on decoders (log-likelihood of text), and on "
        "encoders (how much of their output they keep)"
    )


def score_column(lens: Lens) -> str:
    """The name of the score a head's ablation lowers: an encoder's output similarity, else
    the log-likelihood per token."""
    return "loglik" if lens.capabilities.decodes else "similarity"


ENCODER_NOTE = (
    "{name} is encoder-only: it predicts no token, so its score is how much of its own output "
    "it keeps, the cosine similarity of each token's last hidden state to the whole model's on "
    "the same text (1 with no head ablated); importance is 1 minus that with the head ablated"
)


def measure_importance(
    lens: Lens,
    n: int = 100,
    seed: int = 0,
    progress: Progress = no_progress,
    beam: bool = True,
    pruning: bool = True,
    batched: bool = True,
) -> ExperimentResult:
    """Every head's importance and confidence, and (with pruning) the pruning curves.

    batched: the sets of ablated heads side by side (`run_ablations` and
    `task_scores_many`); False scores one set per forward pass and each beam search alone,
    the path before them, kept as the reference bench/experiments_speed.py measures."""
    started = time.perf_counter()
    n, heads, can = check_n(n), all_heads(lens.info), lens.capabilities
    applies(why_not(lens))
    runs = needed(can.token_runs, can, "token_runs")
    examples = get_task(can.task.name).examples(n, seed) if can.task is not None else None
    if examples is not None:
        texts = [e.source for e in examples]
    else:
        texts = needed(can.samples, can, "samples").sample_texts(n, seed)
    conf = confidence(_attention_runs(runs, examples, texts), heads)
    params = {"n": len(texts), "seed": seed, "beam": beam, "pruning": pruning,
              "fingerprint": lens.fingerprint()}  # fmt: skip
    if can.ablation is None:
        nan = np.full(len(heads), np.nan)
        table = head_table(heads, importance=nan, exact_drop=nan, confidence=conf)
        note = f"only Voita's confidence is measured on {lens.name}: {can.reason('ablation')}"
        return ExperimentResult("importance", lens.name, params, table, {}, {}, (note,),
                                time.perf_counter() - started)  # fmt: skip
    if examples and can.task is not None:
        scorer = task_scorer(can.task, examples, batched)
    elif not can.decodes:
        scorer = output_scorer(can.ablation, _parts(runs, texts, batched), batched)
    else:
        scorer = text_scorer(can.ablation, _parts(runs, texts, batched), batched)
    beam = beam and pruning and examples is not None
    plan = _Plan(len(heads), beam, len(kinds_of(lens.info)) if pruning else 0, progress, pruning)
    table, summary, tables = _measured(scorer, heads, conf, plan, beam, score_column(lens))
    if examples is None:
        summary.pop("exact_greedy", None)
    notes = (ENCODER_NOTE.format(name=lens.name),) if score_column(lens) == "similarity" else ()
    return ExperimentResult("importance", lens.name, params, table, summary, tables, notes,
                            time.perf_counter() - started)  # fmt: skip


def _measured(
    scorer: Scorer,
    heads: Sequence[HeadRef],
    conf: np.ndarray,
    plan: _Plan,
    beam: bool,
    column: str,
) -> tuple[pd.DataFrame, dict[str, object], dict[str, pd.DataFrame]]:
    """Each head ablated alone, then (when plan counts them) the pruning curves: the heads'
    table, the summary and the curves."""

    def said(i: int) -> str:
        return f"ablating {heads[i - 1]}" if i else "scoring the whole model"

    firsts = _scores(scorer, [[], *([ref] for ref in heads)], "greedy", plan, said)
    base, singles = firsts[0], firsts[1:]
    importance = np.array([base.value - s.value for s in singles])
    exact_drop = np.array([base.exact - s.exact for s in singles])
    order = [heads[i] for i in np.lexsort((-conf, exact_drop, importance))]  # least first
    table = head_table(heads, importance=importance, exact_drop=exact_drop, confidence=conf)
    table["prune_rank"] = [order.index(h) for h in heads]
    summary: dict[str, object] = {"heads": len(heads), column: base.value,
                                  "exact_greedy": base.exact}  # fmt: skip
    if not plan.curves:
        return table, summary, {}
    curve = _pruning(scorer, order, plan, beam, column, base)
    by_kind = _pruning_by_kind(scorer, order, plan, column)
    summary = _summary(base, curve, by_kind, not np.isnan(base.exact), column)
    return table, summary, {"pruning": curve, "pruning_by_kind": by_kind}


def _scores(
    scorer: Scorer,
    sets: Sequence[Sequence[HeadRef]],
    search: Search,
    plan: _Plan,
    what: Callable[[int], str],
) -> list[Score]:
    """Each set of ablated heads scored, GROUP sets side by side, progress told per set."""
    out: list[Score] = []
    for start in range(0, len(sets), GROUP):
        out += scorer(sets[start : start + GROUP], search)
        for i in range(start, len(out)):
            plan.tick(what(i))
    return out


class _Plan:
    """Counts the scoring runs ahead, for the progress bar."""

    def __init__(
        self, heads: int, beam: bool, kinds: int, progress: Progress, curves: bool
    ) -> None:
        self.progress, self.done, self.curves = progress, 0, curves
        curve = (heads + 1) * (2 if beam else 1) if curves else 0
        self.total = 1 + heads + curve + (heads if kinds > 1 else 0)

    def tick(self, what: str) -> None:
        self.done += 1
        self.progress(self.done, self.total, what)


def _attention_runs(
    runs: TokenRuns, examples: Sequence[Example] | None, texts: Sequence[str]
) -> list[TokenRun]:
    """The model's attention on the input set. Task models: teacher-forced on the start token
    and the reference, the positions that predict a token (as a trace of source and reference
    holds them; the end token is the last prediction, not a query)."""
    out = []
    if examples is not None:
        space = runs.token_space()
        assert space.start is not None, "a task model is an encoder-decoder"
        for part in chunks(examples, 128):
            tokens = [(space.start, *_reference(runs, space, e.target)) for e in part]
            sources = [runs.token_ids(e.source) for e in part]
            out.append(runs.run_tokens(TokenBatch(tokens, sources)))
        return out
    ids = [runs.token_ids(t) for t in texts]
    return [runs.run_tokens(TokenBatch(list(part))) for part in chunks(ids, BATCH)]


def _reference(runs: TokenRuns, space: TokenSpace, target: str) -> tuple[int, ...]:
    """The ids of a reference target, without the markers the model puts around a text."""
    ids = runs.token_ids(target)
    return ids[len(space.prefix) : len(ids) - len(space.suffix)]


def _pruning(
    scorer: Scorer, order: Sequence[HeadRef], plan: _Plan, beam: bool, column: str, base: Score
) -> pd.DataFrame:
    """Score after removing the first k heads of order, for k = 0 .. all (k = 0 is the whole
    model, scored once already: base)."""
    H = len(order)
    plan.tick(f"pruning 0 of {H} heads (greedy)")
    greedy = [base] + _scores(scorer, [order[:k] for k in range(1, H + 1)], "greedy", plan,
                              lambda i: f"pruning {i + 1} of {H} heads (greedy)")  # fmt: skip
    beams = (
        _scores(scorer, [order[:k] for k in range(H + 1)], "beam", plan,
                lambda i: f"pruning {i} of {H} heads (beam)")
        if beam else []
    )  # fmt: skip
    rows = []
    for k in range(H + 1):
        rows.append({
            "heads_removed": k,
            "fraction_pruned": k / H,
            "removed": str(order[k - 1]) if k else "",
            "exact_greedy": greedy[k].exact,
            column: greedy[k].value,
            "exact_beam": beams[k].exact if beam else float("nan"),
        })  # fmt: skip
    return pd.DataFrame(rows)


def _pruning_by_kind(
    scorer: Scorer, order: Sequence[HeadRef], plan: _Plan, column: str
) -> pd.DataFrame:
    """Michel et al.'s per-kind curves: heads of one kind removed, least important first,
    the others kept (greedy)."""
    kinds: list[Kind] = list(dict.fromkeys(h.kind for h in order))
    columns = ["kind", "heads_removed", "fraction_pruned", "exact_greedy", column]
    if len(kinds) < 2:
        return pd.DataFrame([], columns=columns)
    of_kind = {kind: [h for h in order if h.kind == kind] for kind in kinds}
    keys = [
        (kind, k, len(of_kind[kind])) for kind in kinds for k in range(1, len(of_kind[kind]) + 1)
    ]
    sets = [of_kind[kind][:k] for kind, k, _ in keys]
    scores = _scores(scorer, sets, "greedy", plan,
                     lambda i: f"pruning {keys[i][1]} {keys[i][0]} heads")  # fmt: skip
    rows = [(kind, k, k / total, s.exact, s.value)
            for (kind, k, total), s in zip(keys, scores, strict=True)]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def prunable(curve: pd.DataFrame, column: str) -> int:
    """How many heads go, least important first, before more than 1 point of exact match is
    lost (the first k whose score falls further, minus one)."""
    scores = curve[column].to_numpy()
    lost = np.nonzero(scores < scores[0] - LOST_POINTS - 1e-12)[0]
    return int(lost[0] - 1) if lost.size else len(scores) - 1


def _summary(
    base: Score, curve: pd.DataFrame, by_kind: pd.DataFrame, task: bool, column: str
) -> dict[str, object]:
    heads = len(curve) - 1
    out: dict[str, object] = {
        "heads": heads,
        column: base.value,
        f"{column}_all_removed": float(curve[column].iloc[-1]),
    }
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
        out[f"{column}_all_of_kind_removed"] = last[column].to_dict()
    return out
