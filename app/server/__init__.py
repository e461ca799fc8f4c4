"""The server runtime without Streamlit: traces shared by every session, trace worker processes,
the one line of experiments a public server runs (experiment_turns.py)."""
