"""The lines view (queries left, keys right, a line per weight): the Plotly figure (lines.py),
the payload the browser draws (lines_data.py), and a range of queries at any length
(lines_range.py)."""
