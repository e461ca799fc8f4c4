"""The server runtime without Streamlit: traces shared by every session, trace worker processes."""
