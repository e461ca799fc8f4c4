"""The one interface decoding needs from a model: start, step, reorder.

Every strategy (greedy, beam search, sampling) runs on any model through this Protocol, so a
new model family needs only a Stepper, never its own search. Implementations so far:
`steppers.py` (our §3 Transformer, cached and uncached, and our decoder-only model) and the
Hugging Face adapter (`lenses/hf/stepper.py`) implement the same three methods.

Vocabulary of the interface
---------------------------
B   hypotheses decoded side by side (beams; 1 for greedy and sampling). It changes between
    steps: beam search starts from one hypothesis and widens to K, and finished hypotheses
    leave. `reorder` is how the rows follow the search.
V   the output vocabulary.
L   decoder layers, H heads per layer.
S   source (encoder) positions, the end token included; none for a decoder-only model.
t   the step, counted from 0. Step t's output is computed at the decoder position that holds
    the t-th input token (the start token at step 0), so its self-attention row covers t + 1
    positions for an encoder-decoder model and P + t for a decoder-only model fed a P-token
    prompt.

The contract
------------
1. `start(source, prefix, ablate)` runs whatever happens once per input (an encoder runs here,
   once), feeds `prefix` (the decoder's start token, or a decoder-only model's prompt) and
   returns the first `StepOutput` with B = 1.
2. `step(state, tokens)` feeds ONE new token per hypothesis, `tokens` (B,), and returns the
   next `StepOutput`. An implementation should reuse earlier work (a key/value cache) so a step
   costs about the same at position 8 and at position 64; an uncached implementation that
   recomputes the prefix is allowed and must return the same values.
3. `reorder(state, index)` returns the state of the hypotheses `index` (B',) picks, in that
   order, repeats allowed (beam search uses it to follow parents; index [0, 0, 0, 0] widens one
   hypothesis to four). It never changes the state it was given.
4. Everything comes back by value. A stepper keeps no per-run state on itself and never
   changes the model, so one model can serve many threads; the state object is opaque to the
   search and only handed back to the same stepper.
5. The attention returned is the attention that computed `log_probs`, the same tensors, not
   a second computation. Rows sum to 1; masked (padding, future) keys are exactly 0.
6. Norms (optional): a stepper built with `carried=True` also returns, for the keys each row
   read, what each key gives each head (`self_carried`, `cross_carried`: record/norms.py).
7. Ablation: `ablate` lists heads whose attention output is zeroed for the whole run
   (`HeadRef(kind, layer, head)`, kinds "encoder_self", "decoder_self", "cross", 0-based). The
   heads were range-checked against the model before `start` is called; an implementation
   refuses with a ValueError any kind it cannot ablate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import torch

from attnlens.model.decoding.heads import HeadRef

StateT = TypeVar("StateT")


@dataclass(frozen=True)
class StepOutput(Generic[StateT]):
    """What one decoding step returns, for the B hypotheses fed to it."""

    log_probs: torch.Tensor  # (B, V): natural-log probability of each next token
    self_attention: torch.Tensor  # (L, B, H, t + 1): the new position's decoder self-attention row
    cross_attention: torch.Tensor | None  # (L, B, H, S), or None for a decoder-only model
    state: StateT  # what the next step needs (e.g. the key/value cache), opaque to the search
    logits: torch.Tensor | None = None  # (B, V) before the softmax, when processors need them
    # ‖f_h(xⱼ)‖ of the keys each row's attention read (model/decoding/carried.py), when the
    # stepper was asked for them: (L, B, H, t + 1) self-attention, (L, B, H, S) cross
    self_carried: torch.Tensor | None = None
    cross_carried: torch.Tensor | None = None


class Stepper(Protocol[StateT]):
    """A model decoding one position at a time for B hypotheses at once (see module docstring)."""

    def start(
        self, source: Sequence[int] | None, prefix: Sequence[int], ablate: Sequence[HeadRef] = ()
    ) -> StepOutput[StateT]:
        """Run the encoder on source (None if the model has none) and feed prefix; B = 1."""
        ...

    def step(self, state: StateT, tokens: torch.Tensor) -> StepOutput[StateT]:
        """Feed one new token per hypothesis, tokens (B,) on the model's device."""
        ...

    def reorder(self, state: StateT, index: torch.Tensor) -> StateT:
        """The state of hypotheses index (B',), in that order; repeats allowed."""
        ...
