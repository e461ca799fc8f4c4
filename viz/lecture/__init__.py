"""§3 of the paper drawn piece by piece on a live model, for the lecture's slides and the Inside
page: the architecture, masks and padding, positions, scaled dot-product attention step by step,
multi-head, the output softmax, and the predict-then-reveal figures of a class (reveal.py)."""
