"""Running a head experiment by name, for the command line and the app alike: the model-side
measurement (attnlens.analysis.experiments), the tables drawn from it (attnlens.viz), and the
on-disk cache, so both front ends give the same record for the same model and inputs."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from attnlens.analysis.agreement import (
    METHODS,
    case_correlations,
    correlation_table,
    head_correlations,
    with_current,
)
from attnlens.analysis.experiments import alignment as alignment_part
from attnlens.analysis.experiments import explanation as explanation_part
from attnlens.analysis.experiments import importance as importance_part
from attnlens.analysis.experiments import induction as induction_part
from attnlens.analysis.experiments.alignment import check_alignable, measure_alignment
from attnlens.analysis.experiments.cache import ResultCache, cache_key
from attnlens.analysis.experiments.common import Progress, check_n, no_progress
from attnlens.analysis.experiments.explanation import erasure_case, erasure_cases
from attnlens.analysis.experiments.importance import measure_importance
from attnlens.analysis.experiments.induction import measure_induction
from attnlens.model.lenses.lens import Lens
from attnlens.record.erasure import ErasureCase
from attnlens.record.errors import InputError
from attnlens.record.experiment import ExperimentResult

NAMES = ("induction", "importance", "explanation", "alignment")
DEFAULT_N = {"induction": 100, "importance": 100, "explanation": 50, "alignment": 100}
TITLES = {
    "induction": "Induction heads (Olsson et al. 2022)",
    "importance": "Head importance and pruning (Michel et al. 2019; Voita et al. 2019)",
    "explanation": "Is attention an explanation? Erasure vs attention (Abnar & Zuidema 2020)",
    "alignment": "Heads against the known truth (alignment on our task models)",
}


@dataclass(frozen=True)
class Outcome:
    """A result and whether it was read from the cache."""

    result: ExperimentResult
    cached: bool


WHY_NOT: dict[str, Callable[[Lens], str | None]] = {  # each experiment's reason it does not apply
    "induction": induction_part.why_not,
    "importance": importance_part.why_not,
    "explanation": explanation_part.why_not,
    "alignment": alignment_part.why_not,
}


def why_not(lens: Lens, name: str) -> str | None:
    """Why the experiment does not apply to this model (a message fit to show), or None."""
    return WHY_NOT[check_name(name)](lens)


def check_name(name: str) -> str:
    if name not in NAMES:
        raise InputError(f"no experiment {name!r}; known: {', '.join(NAMES)}")
    return name


def peek(
    lens: Lens, name: str, n: int | None = None, seed: int = 0, scores_only: bool = False
) -> Outcome | None:
    """The cached result of the experiment, without computing anything; None if not cached.
    scores_only: for induction, the scores without each head ablated (run_experiment's) will
    do, the whole result first when the cache holds it."""
    n = check_n(DEFAULT_N[check_name(name)] if n is None else n)
    cache = ResultCache.default()
    for params in _keys(name, n, seed, scores_only):
        found = cache.get(cache_key(name, lens.fingerprint(), params))
        if found is not None:
            return Outcome(found, True)
    return None


def _keys(name: str, n: int, seed: int, scores_only: bool) -> list[dict[str, object]]:
    """The cache's parameters of a result that answers, the whole one first."""
    whole: dict[str, object] = {"n": n, "seed": seed}
    light = scores_only and name == "induction"
    return [whole, {**whole, "ablation": False}] if light else [whole]


def run_experiment(
    lens: Lens,
    name: str,
    n: int | None = None,
    seed: int = 0,
    progress: Progress = no_progress,
    cache: ResultCache | None = None,
    scores_only: bool = False,
) -> Outcome:
    """The experiment on the lens's model and n inputs drawn with seed, from the cache when
    it holds them. scores_only: induction's scores without each head ablated (the Heads
    page's: a second where the whole takes minutes), unless the whole is cached."""
    n = check_n(DEFAULT_N[check_name(name)] if n is None else n)
    cache = ResultCache.default() if cache is None else cache
    keys = [cache_key(name, lens.fingerprint(), p) for p in _keys(name, n, seed, scores_only)]
    for key in keys:
        found = cache.get(key)
        if found is not None:
            return Outcome(found, True)
    key = keys[-1]
    if name == "induction":
        result = measure_induction(lens, n, seed, progress, ablation=not scores_only)
    elif name == "importance":
        result = measure_importance(lens, n, seed, progress)
    elif name == "explanation":
        result = explanation(lens, n, seed, progress)
    else:
        result = measure_alignment(
            lens, _importance_for(lens, n, seed, progress, cache), n, seed, progress
        )
    cache.put(key, result)
    return Outcome(result, False)


def _importance_for(
    lens: Lens, n: int, seed: int, progress: Progress, cache: ResultCache
) -> ExperimentResult:
    """Head importance on the same inputs: the importance experiment's own result when it is
    cached, else single-head ablations alone (no pruning curves), cached in turn."""
    full = cache.get(cache_key("importance", lens.fingerprint(), {"n": n, "seed": seed}))
    if full is not None:
        return full
    key = cache_key("importance", lens.fingerprint(), {"n": n, "seed": seed, "pruning": False})
    light = cache.get(key)
    if light is None:
        check_alignable(lens)  # its message, before any ablation
        light = measure_importance(lens, n, seed, progress, pruning=False)
        cache.put(key, light)
    return light


def explanation(
    lens: Lens, n: int = 50, seed: int = 0, progress: Progress = no_progress
) -> ExperimentResult:
    """Abnar & Zuidema over n held-out inputs: per method and layer, Spearman's ρ of raw
    attention, rollout and flow with input erasure; per head, its own row's ρ."""
    started = time.perf_counter()
    cases = erasure_cases(lens, n, seed, progress)
    per_case = []
    for i, case in enumerate(cases):
        per_case.append(case_correlations(case))
        progress(i + 1, len(cases), "rollout and flow of each input")
    table = correlation_table(per_case)
    last = table[table["layer"] == table["layer"].max()].set_index("method")["mean"]
    summary = {
        "cases": len(cases),
        "mean_spearman_last_layer": {m: float(last.get(m, np.nan)) for m in METHODS},
        "best_method_last_layer": str(last.idxmax()) if last.notna().any() else None,
    }
    notes = []
    if table["cases"].min() < len(cases):
        notes.append(
            "ρ is undefined where erasure or attention is constant over the inputs (e.g. one "
            "input token): such inputs are left out of that cell's mean"
        )
    params = {"n": len(cases), "seed": seed, "fingerprint": lens.fingerprint()}
    return ExperimentResult(
        "explanation",
        lens.name,
        params,
        head_correlations(cases),
        summary,
        {"spearman": table},
        tuple(notes),
        time.perf_counter() - started,
    )


def explain_input(
    lens: Lens, result: ExperimentResult, text: str, output: int | None = None
) -> tuple[ErasureCase, pd.DataFrame]:
    """The current input's case, and the held-out table with its ρ as `this_input`."""
    case = erasure_case(lens, text, output)
    return case, with_current(result.tables["spearman"], case_correlations(case))
