"""The right answer named wherever a task model's output is shown wrong (README: task models).

A model of a task that knows its answers (reverse, sort, dates, translate) is checked against
it: a wrong output gets the right one beside it, and a text the task cannot read says so in the
run's own warnings (model/training/tasks), so nothing is shown wrong without a word.
"""

from __future__ import annotations

from attnlens.model.lenses.lens import Lens
from attnlens.model.training.tasks import TASKS


def right_answer(lens: Lens, text: str, output: str) -> str | None:
    """ "The right answer is …" when the model's task knows the answers for `text` and
    `output` is none of them (translate's synonyms are all right); None when it is right or
    the task cannot tell."""
    task = lens.capabilities.task
    reference = None if task is None else task.reference(text)
    if task is None or reference is None or TASKS[task.name]().accepts(text, output):
        return None
    return f"The right answer is “{reference.target}”, not “{output}”."
