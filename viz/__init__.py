"""attnlens' figures: pure functions from records to Plotly figures and pandas tables."""

from viz.heatmap import head_heatmap

__all__ = ["head_heatmap"]
