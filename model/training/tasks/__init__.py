"""Tasks whose right answers and true alignments are known, for the bundled models."""

from attnlens.model.training.tasks.base import Task
from attnlens.model.training.tasks.dates import DatesTask
from attnlens.model.training.tasks.reverse import ReverseTask
from attnlens.model.training.tasks.sort import SortTask
from attnlens.model.training.tasks.translate import TranslateTask
from attnlens.record.example import Example

TASKS: dict[str, type[Task]] = {
    "reverse": ReverseTask,
    "sort": SortTask,
    "dates": DatesTask,
    "translate": TranslateTask,
}


def get_task(name: str) -> Task:
    """The task of that name with its default settings."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; known tasks: {', '.join(sorted(TASKS))}")
    return TASKS[name]()


__all__ = [
    "TASKS",
    "DatesTask",
    "Example",
    "ReverseTask",
    "SortTask",
    "Task",
    "TranslateTask",
    "get_task",
]
