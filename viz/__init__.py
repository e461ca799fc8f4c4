"""attnlens' figures: pure functions from records (and what attnlens.analysis measured on them) to
Plotly figures, pandas tables and the payloads of the figures the browser draws itself."""

from attnlens.viz.decoding.beam import beam_tree, candidate_bars
from attnlens.viz.decoding.compare import compare_runs
from attnlens.viz.decoding.decode_alignment import decoding_alignment
from attnlens.viz.heads.alignment import cross_alignment
from attnlens.viz.heads.head_grid import HeadGrid, head_grid
from attnlens.viz.heads.heatmap import head_heatmap
from attnlens.viz.heads.model_view import model_view
from attnlens.viz.heads.segments import pair_heatmap
from attnlens.viz.lecture.mask_view import masks_view
from attnlens.viz.lecture.positional_view import positional_view
from attnlens.viz.lines.lines import lines_view
from attnlens.viz.lines.lines_data import LinesData, lines_data
from attnlens.viz.measures.head_stats_chart import head_stats_chart
from attnlens.viz.measures.rollout_view import rollout_view
from attnlens.viz.measures.training_curve import training_curve

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
