"""attnlens' user side: the Streamlit app and the command line."""
