"""The interface every loaded model offers, whatever its origin."""

from __future__ import annotations

from abc import ABC, abstractmethod

from model.trace import ModelInfo, Trace


class Lens(ABC):
    """A loaded model that returns what it attended to. Shared between threads: no state
    changes after construction, every result comes back by value."""

    info: ModelInfo
    description: str = ""

    @property
    def name(self) -> str:
        return self.info.name

    @property
    @abstractmethod
    def max_tokens(self) -> int:
        """The longest input, in tokens, this model accepts."""

    @abstractmethod
    def trace(self, text: str, target: str | None = None) -> Trace:
        """Run the model on text (teacher-forced on target when given) and record attention."""
