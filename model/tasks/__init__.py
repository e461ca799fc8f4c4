"""Tasks whose right answers and true alignments are known, for the bundled models."""

from model.tasks.base import Example, Task
from model.tasks.reverse import ReverseTask

TASKS: dict[str, type[Task]] = {"reverse": ReverseTask}


def get_task(name: str) -> Task:
    """The task of that name with its default settings."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; known tasks: {', '.join(sorted(TASKS))}")
    return TASKS[name]()


__all__ = ["TASKS", "Example", "ReverseTask", "Task", "get_task"]
