"""Drawing a slide for a projector: title and counter, the figure first, the words beside it,
and the buttons a presentation clicker presses (arrow keys, PageUp / PageDown)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import plotly.graph_objects as go
import streamlit as st

from attnlens.app.teaching.deck import Deck, Slide
from attnlens.app.teaching.slides import Built
from attnlens.app.teaching.view import View
from attnlens.app.web.safe_text import md
from attnlens.app.web.screen_size import narrow
from attnlens.viz.shared.narrow import narrowed

# Fixed CSS (never user text): no sidebar, little padding, type a back row can read.
PROJECTOR_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"] { display: none; }
[data-testid="stMainBlockContainer"], .block-container
  { padding-top: 3.4rem; padding-bottom: 1rem; max-width: 100%; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li
  { font-size: 1.45rem; line-height: 1.45; }
h1 { font-size: 2.5rem !important; padding-top: 0 !important; }
@media (min-width: 1200px) {  /* a projector's: a phone keeps the small line */
  [data-testid="stMain"] [data-testid="stCaptionContainer"],
  [data-testid="stMain"] [data-testid="stCaptionContainer"] p { font-size: 1.5rem; }
  [data-testid="stPopoverBody"] p, [data-testid="stPopoverBody"] input
    { font-size: 1.3rem; } }  /* a popover is drawn outside stMain: the Class settings' */
.st-key-lec_counter p { font-size: 1.6rem; text-align: right; font-weight: 600; }
[class*="_hidden_keys"] { display: none; }
[data-testid="stMain"] button p, [data-testid="stMain"] a p { font-size: 1.25rem; }
.st-key-lec_join_link code, .st-key-lec_qr_link code, .st-key-lec_join_warning code
  { font-size: 1.45rem; }
.st-key-lec_options .stButton button { min-height: 3.2rem; justify-content: flex-start; }
[data-testid="stLayoutWrapper"]:has(> .st-key-lec_nav) { position: sticky; bottom: 0;
  z-index: 5; background: Canvas; padding: 0.4rem 0; }  /* Previous / Next in sight */
</style>"""
STEP_FIGURES = {"causal", "softmax", "decoding"}
FIGURE_CONFIG = {"displayModeBar": False}  # no Plotly toolbar floating over a slide's figure


def projector_css() -> None:
    st.html(PROJECTOR_CSS)


@dataclass(frozen=True)
class Place:
    """Where a lecture is: a deck, a slide (0-based) and the view on it."""

    deck: str
    slide: int
    view: View

    def moved(self, deck: Deck, delta: int) -> Place:
        """delta slides on (clamped to the deck); the view carried to the new slide."""
        index = min(max(self.slide + delta, 0), len(deck.slides) - 1)
        if index == self.slide:
            return self
        return Place(self.deck, index, self.view.on_slide(deck.slides[index]))


def header(deck: Deck, slide: Slide, extra: str = "") -> None:
    """The slide's title, and its place in the deck in the corner: "4 / 14"."""
    left, right = st.columns([5, 1], vertical_alignment="bottom")
    left.title(slide.title, anchor=False)
    with right.container(key="lec_counter"):
        st.markdown(f"{slide.number} / {len(deck.slides)}")  # fixed words: two numbers
    section = f"§{slide.section} · " if slide.section and slide.section[0].isdigit() else ""
    st.caption(md(f"{section}{deck.title}{extra}"))


def body(
    slide: Slide, built: Built, revealed: bool = False, words: bool = True
) -> st.delta_generator.DeltaGenerator:
    """Figure first (or the reveal once revealed), the words beside it (unless `words` is off:
    the class's answers need the room); returns the words' column for the question."""
    if slide.figure == "title":
        return st.container()
    fig_col, words_col = st.columns([0.64, 0.36], gap="large")
    with fig_col:
        shown = built.reveal if revealed and built.reveal is not None else built.figure
        if shown is not None and narrow():  # a phone: a copy reflowed (the build is shared)
            shown = narrowed(go.Figure(shown))
        if shown is not None:
            st.plotly_chart(shown, width="stretch", key="lec_figure", config=FIGURE_CONFIG)
        if built.problem:
            st.info(md(built.problem))
        for note in built.notes:
            st.caption(md(note))
    if words:
        with words_col:
            st.markdown(slide.words)  # fixed words: the deck author's Markdown (no HTML)
    return words_col


def navigation(
    place: Place, deck: Deck, built: Built, go: Callable[[Place], None], prefix: str = "lec"
) -> None:
    """Previous / next (← → and PageUp / PageDown), and for a slide that walks through tokens,
    step back / on (↑ ↓). `go` is called with the new place."""
    slide = deck.slides[place.slide]
    cols = st.container(key=f"{prefix}_nav").columns([1, 1, 1, 1, 4])
    cols[0].button("◀ Previous", key=f"{prefix}_prev", shortcut="Left",
                   disabled=place.slide == 0, on_click=go, args=(place.moved(deck, -1),),
                   width="stretch")  # fmt: skip
    cols[1].button("Next ▶", key=f"{prefix}_next", shortcut="Right", type="primary",
                   disabled=place.slide == len(deck.slides) - 1,
                   on_click=go, args=(place.moved(deck, 1),), width="stretch")  # fmt: skip
    if slide.figure in STEP_FIGURES and built.shown.step is not None:
        last = _last_step(slide, built)
        step = built.shown.step
        back = replace(place, view=place.view.with_(step=max(step - 1, 0)))
        on = replace(place, view=place.view.with_(step=min(step + 1, last)))
        # on is down: the causal mask gains its rows, and decoding its tokens, downwards
        cols[2].button("▲ Back", key=f"{prefix}_step_back", shortcut="Up", disabled=step <= 0,
                       on_click=go, args=(back,), width="stretch",
                       help="a token back (↑)")  # fmt: skip
        cols[3].button("Step ▼", key=f"{prefix}_step_on", shortcut="Down", disabled=step >= last,
                       on_click=go, args=(on,), width="stretch",
                       help="the next token (↓)")  # fmt: skip
    with st.container(key=f"{prefix}_hidden_keys"):  # what a clicker sends, on hidden twins
        st.button("previous", key=f"{prefix}_pageup", shortcut="PageUp",
                  on_click=go, args=(place.moved(deck, -1),))  # fmt: skip
        st.button("next", key=f"{prefix}_pagedown", shortcut="PageDown",
                  on_click=go, args=(place.moved(deck, 1),))  # fmt: skip


def _last_step(slide: Slide, built: Built) -> int:
    """The last step the slide's figure can show (decoder positions for the causal mask)."""
    return max(0, built.shown.steps - 1)
