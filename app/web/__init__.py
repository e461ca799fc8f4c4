"""The Streamlit front end: main.py runs the pages, a folder per page with its own controls beside
it; what several pages share at this level; static/ holds the JavaScript and CSS of the figures
the browser draws itself."""
