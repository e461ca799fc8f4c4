"""attnlens' records: what a model computed, as plain numpy data that serialises to JSON.

This package imports numpy and pandas only, so figures (`attnlens.viz`) and notebooks can read
and draw saved records without torch.
"""

from attnlens.record.decode import BeamStep, Candidate, DecodeRun, Hypothesis, StepRecord
from attnlens.record.errors import InputError, ModelNotFoundError
from attnlens.record.trace import Architecture, Kind, ModelInfo, Trace

__all__ = [
    "Architecture",
    "BeamStep",
    "Candidate",
    "DecodeRun",
    "Hypothesis",
    "InputError",
    "Kind",
    "ModelInfo",
    "ModelNotFoundError",
    "StepRecord",
    "Trace",
]
