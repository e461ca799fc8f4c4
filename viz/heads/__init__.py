"""Attention heads as maps of their weights: one head (heatmap.py; a sentence pair's in
segments.py, cross-attention's alignment in alignment.py), every head of one kind (model_view.py,
and the payload the browser draws: head_grid.py, overview_grid.py for a long input), one head at
any length (head_window.py, window_figure.py), the marks of modern attention (head_marks.py) and
the colour rule they all share (colour_scale.py)."""
