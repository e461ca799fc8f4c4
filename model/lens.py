"""The interface every loaded model offers, whatever its origin."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from model.decoding.record import DecodeRun
from model.decoding.settings import DecodeSettings, ModelLimits, make_settings
from model.tasks.base import Example
from model.trace import ModelInfo, Trace


@dataclass(frozen=True)
class DecodePlan:
    """Decoding prepared for one input: what the settings are checked against, and the run."""

    limits: ModelLimits
    run: Callable[[DecodeSettings], DecodeRun]


class Lens(ABC):
    """A loaded model that returns what it attended to. Shared between threads: no state
    changes after construction, every result comes back by value."""

    info: ModelInfo
    description: str = ""
    example: str = "hello world"  # a first input that shows what this model does

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

    def decode(
        self,
        text: str,
        strategy: str = "greedy",
        beam_size: int = 4,
        max_len: int | None = None,
        length_penalty: float = 0.0,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int | None = None,
        force: Mapping[int, str] | None = None,
        ablate: Sequence[str] | None = None,
    ) -> DecodeRun:
        """Decode text (greedy, beam or sample), recording every step's beams and attention.

        Keywords mirror `attnlens decode`'s flags; `model.decoding.make_settings` checks them
        against the limits of this model and input.
        """
        plan = self.decode_plan(text)
        settings = make_settings(
            plan.limits, strategy, beam_size, max_len, length_penalty, temperature, top_k, top_p,
            seed, force, ablate,
        )  # fmt: skip
        return plan.run(settings)

    @abstractmethod
    def decode_plan(self, text: str) -> DecodePlan:
        """Check text and prepare decoding it; bad input raises InputError here."""

    def reference(self, text: str) -> Example | None:
        """The right output for text and the true source of each output token, for a model
        trained on one of our tasks that can tell; None otherwise."""
        return None

    @abstractmethod
    def text_of(self, tokens: Sequence[str]) -> str:
        """The text output tokens spell, special tokens dropped (what an "Output:" line shows)."""
