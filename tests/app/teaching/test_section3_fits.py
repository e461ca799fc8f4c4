"""The bundled lecture's words fit beside their figure on a 1920×1080 projector, a class
started: the words' column (1.45 rem text, ~60 characters a line) over the question, its
options and the class's count, then the slide's buttons, all on the screen."""

from __future__ import annotations

import math

from attnlens.app.teaching.deck import Slide, read_library

CHARS_PER_LINE = 60  # the words' column at 1920 px: 36% of the page, 23 px text
# Lines of words a question slide holds with a class started (Chromium at 1920×1080): slide 6
# at 9.5 keeps the Next button 46 px above the screen's foot; slide 4 at 11.5 had it cut off
QUESTION_LINES = 10.0
WORDS_LINES = 16.0  # no question under them: the figure (640 px) is the taller


def lines(slide: Slide) -> float:
    """The lines the slide's words take: each paragraph's, and half a line between them."""
    paragraphs = [" ".join(p.split()) for p in slide.words.split("\n\n") if p.strip()]
    wrapped = sum(math.ceil(len(p) / CHARS_PER_LINE) for p in paragraphs)
    return wrapped + 0.5 * max(0, len(paragraphs) - 1)


def test_every_slide_s_words_fit_above_its_buttons() -> None:
    deck = read_library().decks["section3"]
    over = {
        s.number: lines(s)
        for s in deck.slides
        if lines(s) > (QUESTION_LINES if s.ask else WORDS_LINES)
    }
    assert not over, f"slides whose words push the buttons off a 1080-line screen: {over}"
