"""An experiment's summary as a table a person reads: each measure named in words, a head as
layer.head, a value per layer as "layer 0: 18.5%", shares as percentages, yes/no for flags
(the record keeps the plain JSON: `best_aligned_head [1, 0]`)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from attnlens.record.experiment import ExperimentResult

NAMES = {  # measures whose key does not read well with its underscores as spaces
    "exact_greedy": "exact match, greedy",
    "exact_beam": "exact match, beam search",
    "prunable_greedy": "heads that can go with ≤ 1 point lost (greedy)",
    "prunable_beam": "heads that can go with ≤ 1 point lost (beam search)",
    "loglik": "log-likelihood per token",
    "loglik_all_removed": "log-likelihood per token, every head removed",
    "exact_all_of_kind_removed": "exact match, every head of one kind removed",
    "loglik_all_of_kind_removed": "log-likelihood per token, every head of one kind removed",
    "similarity": "output similarity",
    "similarity_all_removed": "output similarity, every head removed",
    "similarity_all_of_kind_removed": "output similarity, every head of one kind removed",
    "copy_loss_ratio": "second copy's loss / first copy's",
    "in_context_learning_score": "in-context-learning score (second copy − first, nats)",
    "first_copy_loss": "first copy's loss (nats)",
    "second_copy_loss": "second copy's loss (nats)",
    "best_aligned_head_importance_rank": "best-aligned head's importance rank",
    "alignment_heads": "alignment heads (≥ 80%)",
    "spearman_alignment_importance": "Spearman ρ, alignment vs importance",
    "mean_spearman_last_layer": "mean Spearman ρ with erasure, last layer",
}
SHARES = {  # measures that are shares: shown as percentages
    "exact_greedy", "exact_beam", "exact_all_of_kind_removed", "best_alignment",
    "mean_alignment_by_layer", "best_alignment_by_layer", "copy_loss_ratio",
}  # fmt: skip


def measure_name(key: str) -> str:
    """A summary key in words."""
    return NAMES.get(key, key.replace("_", " "))


def shown_value(key: str, value: object) -> str:
    """A summary value as a person reads it, for its key."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key.endswith("_head") and isinstance(value, list | tuple) and len(value) == 2:
        return f"{value[0]}.{value[1]}"
    share = key in SHARES
    if key.endswith("_by_layer") and isinstance(value, list | tuple):
        return " · ".join(f"layer {i}: {_number(v, share)}" for i, v in enumerate(value))
    if isinstance(value, Mapping):
        return " · ".join(
            f"{str(k).replace('_', ' ')}: {_number(v, share)}" for k, v in value.items()
        )
    return _number(value, share)


def _number(value: object, share: bool) -> str:
    if isinstance(value, float):
        if value != value:  # NaN
            return "n/a"
        return f"{value:.1%}" if share else f"{value:.4g}"
    return "n/a" if value is None else str(value)


def summary_table(result: ExperimentResult) -> pd.DataFrame:
    """Columns measure and value, one row per summary entry, in the record's order."""
    rows = [(measure_name(k), shown_value(k, v)) for k, v in result.summary.items()]
    return pd.DataFrame(rows, columns=["measure", "value"])
