"""Loaded models behind one contract (`lens.Lens`): our own (`own.py`, `seq2seq.py`,
`causal.py`), Hugging Face ones (`hf/`), and how a name becomes a lens (`registry.py`)."""
