"""The figure of each experiment, for the command line's --figure and the docs' pictures
(the app draws the same functions on its pages)."""

from __future__ import annotations

import plotly.graph_objects as go

from attnlens.analysis.experiments.catalog import explain_input
from attnlens.analysis.experiments.induction import two_heads
from attnlens.model.lenses.lens import Lens
from attnlens.record.experiment import ExperimentResult
from attnlens.viz.experiments.alignment_view import alignment_chart
from attnlens.viz.experiments.explanation_view import explanation_view
from attnlens.viz.experiments.importance_view import importance_chart, pruning_curve
from attnlens.viz.experiments.induction_view import induction_heads_view


def experiment_figure(lens: Lens, result: ExperimentResult, text: str) -> go.Figure:
    """The experiment's figure; text is the input shown where the figure shows one."""
    if result.experiment == "induction":
        kind = lens.info.self_kind
        prev, ind = two_heads(result)
        return induction_heads_view(lens.trace(text), prev, ind, kind)
    if result.experiment == "importance":
        return pruning_curve(result) if "pruning" in result.tables else importance_chart(result)
    if result.experiment == "explanation":
        case, table = explain_input(lens, result, text)
        return explanation_view(case, table)
    if result.experiment == "alignment":
        return alignment_chart(result)
    raise ValueError(f"no figure for experiment {result.experiment!r}")
