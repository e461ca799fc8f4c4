"""One step of a recorded decoding run as the decode record keeps it (attnlens.decode/2)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from attnlens.model.decoding.stepper import StepOutput
from attnlens.model.decoding.vocabulary import Vocabulary
from attnlens.record.decode import BeamStep, Candidate, StepRecord

MIN_CANDIDATES = 5  # top candidates recorded per live beam (at least the beam size)


def step_record(
    t: int,
    beams: tuple[BeamStep, ...],
    out: StepOutput[Any],
    shown: torch.Tensor,
    vocab: Vocabulary,
    width: int,
) -> StepRecord:
    """The step's beams, each live row's top candidates under `shown` (B, V: the model's own
    log-probabilities, -inf where ruled out), its attention and (when the stepper took them)
    what each key gives each head, as numpy."""
    n = min(max(MIN_CANDIDATES, width), shown.size(-1))
    top = shown.topk(n, dim=-1)  # (B, n) ×2
    probs, ids = top.values.exp().tolist(), top.indices.tolist()
    candidates = tuple(
        tuple(Candidate(vocab.names[i], p) for i, p in zip(row_ids, row_p, strict=True))
        for row_ids, row_p in zip(ids, probs, strict=True)
    )
    cross = None if out.cross_attention is None else _numpy(out.cross_attention)
    own_carried = None if out.self_carried is None else _numpy(out.self_carried)
    cross_carried = None if out.cross_carried is None else _numpy(out.cross_carried)
    return StepRecord(
        t, beams, candidates, cross, _numpy(out.self_attention), own_carried, cross_carried
    )


def _numpy(attention: torch.Tensor) -> np.ndarray:
    """(L, B, H, K) on any device to (L, H, B, K) float32 on the CPU."""
    return attention.permute(0, 2, 1, 3).float().cpu().numpy().copy()
