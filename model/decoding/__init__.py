"""Decoding you can step through: greedy, beam search and sampling on one step loop."""

from model.decoding.heads import ABLATE_HELP, HeadRef, parse_head
from model.decoding.loop import Vocabulary, iter_steps, search
from model.decoding.record import BeamStep, Candidate, DecodeRun, Hypothesis, StepRecord
from model.decoding.settings import MAX_BEAM, DecodeSettings, ModelLimits, make_settings
from model.decoding.stepper import StepOutput, Stepper

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
