"""'What does this head carry from the special tokens?' (questions.carried_question): asked on the
head with most weight on them, its answer the band its carried share falls in, and not asked
where the weight is not striking or the share sits on a band's edge."""

from __future__ import annotations

import numpy as np

from attnlens.app.teaching.questions import NoQuestion, Question, carried_question
from helpers.synth import make_trace

SRC = ("[CLS]", "the", "cat", "sat", "[SEP]")


def _trace(on_specials: float) -> tuple[object, np.ndarray]:
    """Layer 0's head 1 puts `on_specials` of every row on [CLS]; the rest spread evenly."""
    w = np.full((1, 2, 5, 5), 0.25, dtype=np.float32)
    w[0, :, :, 0] = 0.0
    w[0, 1] = (1 - on_specials) / 3
    w[0, 1, :, 0], w[0, 1, :, 4] = on_specials, 0.0
    carried = np.ones((1, 2, 5))
    carried[0, :, 0] = 0.1  # [CLS]'s vector carries a tenth of the others'
    tr = make_trace(src=SRC, L=1, H=2, encoder_self=w)
    return tr, carried


def test_the_head_with_most_weight_on_specials_is_asked_and_the_band_is_right() -> None:
    tr, carried = _trace(0.9)
    q = carried_question(tr, "encoder_self", 0, carried)  # type: ignore[arg-type]
    assert isinstance(q, Question) and q.head == 1 and "90%" in q.prompt
    share = 0.9 * 0.1 / (0.9 * 0.1 + 0.1)  # 47%: between a half (45%) and all (90%)
    assert q.options[q.answer] == "45% to 90%" and abs(q.scores[1] - share) < 1e-6


def test_no_question_where_the_weight_is_not_striking_or_on_an_edge() -> None:
    tr, carried = _trace(0.4)
    q = carried_question(tr, "encoder_self", 0, carried)  # type: ignore[arg-type]
    assert isinstance(q, NoQuestion) and "40%" in q.reason
    tr, carried = _trace(0.9)
    carried[0, 1, 0] = 0.045 / 0.495  # 0.9 c / (0.9 c + 0.1) = 45%, a band's edge
    q = carried_question(tr, "encoder_self", 0, carried)  # type: ignore[arg-type]
    assert isinstance(q, NoQuestion) and "edge" in q.reason
