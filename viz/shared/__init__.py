"""What every figure shares: its colours (palette.py), token labels (labels.py), the room they
take (margins.py), labels of a scatter's points kept apart (point_labels.py), the outline of one
row (outline.py), and how a figure is dressed for a projector or an exported file (style.py)."""
