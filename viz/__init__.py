"""attnlens' figures: pure functions from records (and what attnlens.analysis measured on them) to
Plotly figures, pandas tables and the payloads of the figures the browser draws itself."""

from attnlens.viz.alignment import cross_alignment
from attnlens.viz.beam import beam_tree, candidate_bars
from attnlens.viz.compare import compare_runs
from attnlens.viz.decode_alignment import decoding_alignment
from attnlens.viz.head_grid import HeadGrid, head_grid
from attnlens.viz.head_stats_chart import head_stats_chart
from attnlens.viz.heatmap import head_heatmap
from attnlens.viz.lines import lines_view
from attnlens.viz.lines_data import LinesData, lines_data
from attnlens.viz.mask_view import masks_view
from attnlens.viz.model_view import model_view
from attnlens.viz.positional_view import positional_view
from attnlens.viz.rollout_view import rollout_view
from attnlens.viz.segments import pair_heatmap
from attnlens.viz.training_curve import training_curve

__all__ = [
    "HeadGrid",
    "LinesData",
    "beam_tree",
    "candidate_bars",
    "compare_runs",
    "cross_alignment",
    "decoding_alignment",
    "head_grid",
    "head_heatmap",
    "head_stats_chart",
    "lines_data",
    "lines_view",
    "masks_view",
    "model_view",
    "pair_heatmap",
    "positional_view",
    "rollout_view",
    "training_curve",
]
