"""The live class without Streamlit: who is in it and what it shows (state.py, limits.py,
names.py), where it is kept (store.py, the contract and the server's copy; sqlite_store.py,
redis_store.py; stores.py opens one per URL and process), how students' pages follow it
(board.py; follow_route.py, slide_route.py, answer_route.py, with the pieces they share in
route_parts.py) and the page they follow it in (follow_page.py, its markup, style and script in
static/), the join link and its QR code (join_link.py, qr.py). The lecture it follows is
app/teaching; the Streamlit side of both is app/web/lecture."""
