"""The Training page: page.py (a Streamlit page script, run by path from app/web/main.py) and
its parts."""
