"""What attnlens.analysis measures on a record, drawn: head statistics (head_stats_chart.py),
rollout and flow (rollout_view.py), a token set's share in every head (token_sets.py), and
training's loss and held-out scores (training_curve.py)."""
