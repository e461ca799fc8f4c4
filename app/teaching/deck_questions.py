"""A slide built in its deck: a question an earlier slide asks is not asked again (slides 4
and 6 of the bundled deck both asked where layer 0's sharpest head looks, the same question)."""

from __future__ import annotations

from collections.abc import Sequence

from attnlens.app.teaching.deck import Slide
from attnlens.app.teaching.live import LiveInput
from attnlens.app.teaching.questions import Question
from attnlens.app.teaching.slides import Built, build, question_of
from attnlens.app.teaching.view import View


def asked_before(
    slides: Sequence[Slide], index: int, live: LiveInput, view: View
) -> list[Question]:
    """The "where" questions the slides before `index` ask on this input, each as its slide
    opens (its own layer and head: the view's model and text carried to it)."""
    asked: list[Question] = []
    for slide in slides[:index]:
        if slide.ask == "where":
            question = question_of(slide, live, view.on_slide(slide), asked)
            if isinstance(question, Question):
                asked.append(question)
    return asked


def build_in_deck(slides: Sequence[Slide], index: int, live: LiveInput, view: View) -> Built:
    """Slide `index` (0-based) of the deck built on this input, asking no question again."""
    slide = slides[index]
    asked = asked_before(slides, index, live, view) if slide.ask == "where" else []
    return build(slide, live, view, asked)
