"""Teaching without Streamlit: decks, slides built on live records, sharp questions, and the live
class (its state, its stores in SQLite or Redis, join codes and nicknames, the QR code)."""
