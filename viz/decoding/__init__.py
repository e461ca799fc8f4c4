"""Decoding runs drawn: the beam tree and its rows (beam.py, beam_rows.py), runs side by side
(compare.py), a step seen from the app (decode_step.py), a run's cross-attention
(decode_alignment.py), a decoder-only model's likeliest next tokens (next_tokens_table.py)."""
