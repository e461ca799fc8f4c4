"""Decoding you can step through: greedy, beam search and sampling on one step loop.

The settings and the record load without torch; the loop and the stepper protocol on first use.
"""

from typing import TYPE_CHECKING

from model.decoding.heads import ABLATE_HELP, HeadRef, parse_head
from model.decoding.record import BeamStep, Candidate, DecodeRun, Hypothesis, StepRecord
from model.decoding.settings import MAX_BEAM, DecodeSettings, ModelLimits, make_settings
from model.lazy import lazy_attributes

if TYPE_CHECKING:
    from model.decoding.loop import Vocabulary, iter_steps, search
    from model.decoding.stepper import StepOutput, Stepper

_LOOP, _STEPPER = "model.decoding.loop", "model.decoding.stepper"
__getattr__ = lazy_attributes(
    __name__,
    {
        "Vocabulary": _LOOP,
        "iter_steps": _LOOP,
        "search": _LOOP,
        "StepOutput": _STEPPER,
        "Stepper": _STEPPER,
    },
)

__all__ = [
    "ABLATE_HELP",
    "MAX_BEAM",
    "BeamStep",
    "Candidate",
    "DecodeRun",
    "DecodeSettings",
    "HeadRef",
    "Hypothesis",
    "ModelLimits",
    "StepOutput",
    "StepRecord",
    "Stepper",
    "Vocabulary",
    "iter_steps",
    "make_settings",
    "parse_head",
    "search",
]
