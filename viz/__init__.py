"""attnlens' figures: pure functions from records to Plotly figures and pandas tables."""

from viz.alignment import cross_alignment
from viz.beam import beam_tree, candidate_bars
from viz.compare import compare_runs
from viz.decode_alignment import decoding_alignment
from viz.head_stats import head_statistics, head_stats_chart
from viz.heatmap import head_heatmap
from viz.lines import lines_view
from viz.mask_view import masks_view
from viz.model_view import model_view
from viz.positional_view import positional_view
from viz.rollout import attention_flow, attention_rollout, rollout_view
from viz.training_curve import training_curve

__all__ = [
    "attention_flow",
    "attention_rollout",
    "beam_tree",
    "candidate_bars",
    "compare_runs",
    "cross_alignment",
    "decoding_alignment",
    "head_heatmap",
    "head_statistics",
    "head_stats_chart",
    "lines_view",
    "masks_view",
    "model_view",
    "positional_view",
    "rollout_view",
    "training_curve",
]
