"""The view a class follows: which model and input a slide runs on, and the teacher's choices of
layer, head and step on it (None: what the slide says)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from attnlens.app.teaching.deck import Deck, Slide

DEFAULT_MODEL = "translate"
MAX_TEXT = 2_000  # characters of input a class view may carry


@dataclass(frozen=True)
class View:
    """The teacher's changes to the slide's own settings; what every student's screen shows."""

    model: str | None = None
    text: str | None = None
    layer: int | None = None
    head: int | None = None
    step: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: object) -> View:
        """A view from stored or sent data; anything of the wrong type or size is dropped, so a
        crafted value can never reach a model as something else."""
        if not isinstance(data, dict):
            return cls()
        out: dict[str, Any] = {}
        for name in ("model", "text"):
            value = data.get(name)
            if isinstance(value, str) and 0 < len(value) <= MAX_TEXT:
                out[name] = value
        for name in ("layer", "head", "step"):
            value = data.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10_000:
                out[name] = value
        return cls(**out)

    def on_slide(self, slide: Slide) -> View:
        """The view carried to another slide: layer, head and step start again from the slide;
        the model and text carry on unless the slide names its own."""
        return View(
            model=None if slide.model else self.model,
            text=None if slide.text or slide.model else self.text,
        )

    def with_(self, **changes: Any) -> View:
        return replace(self, **changes)


def model_name(deck: Deck, slide: Slide, view: View, default: str = DEFAULT_MODEL) -> str:
    """The teacher's choice, else the slide's, else the deck's, else the default."""
    return view.model or slide.model or deck.model or default


def input_text(deck: Deck, slide: Slide, view: View, example: str) -> str:
    """The teacher's text, else the slide's or deck's when the slide runs on their model, else
    the model's own example (a deck's sentence may mean nothing to another model)."""
    if view.text:
        return view.text
    own_model = view.model is None or view.model == (slide.model or deck.model)
    if own_model and slide.text:
        return slide.text
    if own_model and deck.text and (slide.model is None or slide.model == deck.model):
        return deck.text
    return example
