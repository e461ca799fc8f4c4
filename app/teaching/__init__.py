"""The lecture without Streamlit: decks, slides built on live records, sharp questions, and the
slides' sizes on a projector and on a student's screen. The live class that follows a lecture is
its own part, app/classroom."""
