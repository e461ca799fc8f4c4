"""The app's pages: each file is a Streamlit page script, run by path (see app/main.py)."""
