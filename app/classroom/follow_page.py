"""The component a following student's page is: it waits on the follow route for the class to
move, which answers with the new slide's payload (slide_route.py: built once for the class, the
same bytes for every student; the slide route sends it too, for the first slide and after a
failure), draws it itself (Plotly.js for the figures) and answers through the answer
route (answer_route.py): a slide change costs the server no Streamlit rerun per student.

No build step: the Streamlit component protocol by hand, in static/follow.js; its markup and
style are static/follow.html and static/follow.css, put together into one page here (one file for
the browser to fetch). Text from the deck or the model goes
in as text (textContent), except the deck's words, Markdown the server rendered with raw HTML
off. 404 from the follow or slide route (the class ended, or the store lost it) asks the page
for a rerun once per RETRY_MS, so that it says what became of the class; so does an answer
refused because the student is no longer in the class (403). 503 and a lost connection try
again after a while. A hidden tab holds no request (a browser opens at most 6 connections to
one server): it asks again once shown. A page that closes says so (a beacon to the follow
route's /left), so the teacher's count of students here drops at once.
"""

from __future__ import annotations

from pathlib import Path

RETRY_MS = 2000  # a request that failed is tried again after about this long
PHONE_BELOW_PX = 640  # a page narrower than this asks for a phone's slide (&size=phone)
FOLLOW_PATH = "_attnlens/follow"  # the routes, under the server's base path
SLIDE_PATH = "_attnlens/slide"
ANSWER_PATH = "_attnlens/answer"
PLOTLY_FILE = "plotly.min.js"  # beside the component's page (board.py copies it there)
# the app's own font beside it too (app/web/lecture/resources.py copies Streamlit's files): the
# component is a page of its own, which the app's @font-face does not reach
FONT_FILES = ("source-sans.woff2", "source-sans-italic.woff2")

STATIC = Path(__file__).with_name("static")
SETTINGS = {  # written into the script where it names them
    "%RETRY_MS%": str(RETRY_MS),
    "%FOLLOW_PATH%": FOLLOW_PATH,
    "%SLIDE_PATH%": SLIDE_PATH,
    "%ANSWER_PATH%": ANSWER_PATH,
    "%PLOTLY_FILE%": PLOTLY_FILE,
    "%PHONE_BELOW_PX%": str(PHONE_BELOW_PX),
}


def follow_html() -> str:
    """The component's page: follow.html with follow.css and follow.js inside it, and the
    settings above written in."""
    css, body, script = (
        (STATIC / name).read_text(encoding="utf-8").removesuffix("\n")
        for name in ("follow.css", "follow.html", "follow.js")
    )
    page = (
        '<!doctype html>\n<html><head><meta charset="utf-8">\n'
        f"<style>\n{css}\n</style>\n</head><body>\n{body}\n<script>\n{script}\n</script>\n"
        "</body></html>\n"
    )
    for name, value in SETTINGS.items():
        page = page.replace(name, value)
    return page


FOLLOW_HTML = follow_html()
