"""attnlens' figures: pure functions from records to Plotly figures and pandas tables."""

from viz.alignment import cross_alignment
from viz.heatmap import head_heatmap
from viz.lines import lines_view
from viz.mask_view import masks_view
from viz.model_view import model_view
from viz.positional_view import positional_view
from viz.rollout import rollout_view

__all__ = [
    "cross_alignment",
    "head_heatmap",
    "lines_view",
    "masks_view",
    "model_view",
    "positional_view",
    "rollout_view",
]
