"""The right answer named wherever a task model's output is shown wrong (README: task models).

A model of a task that knows its answers (reverse, sort, dates, translate) is checked against
it: a wrong output gets the right one beside it, and a text the task cannot read says so in the
run's own warnings (model/training/tasks), so nothing is shown wrong without a word.
"""

from __future__ import annotations

from attnlens.model.lenses.lens import Lens


def right_answer(lens: Lens, text: str, output: str) -> str | None:
    """ "The right answer is …" when the model's task knows the answer for `text` and
    `output` is not it; None when it is right or the task cannot tell."""
    reference = lens.reference(text)
    if reference is None or output == reference.target:
        return None
    return f"The right answer is “{reference.target}”, not “{output}”."
