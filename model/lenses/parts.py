"""The optional parts of a lens (docs/python.md): what only some models can do, each a small
object that `Lens.capabilities` hands out, or None with the reason fit to show.

Each part holds the lens' own functions that do the work (`Predictor(self._next_tokens)`), so a
part exists only where its model can do all it says: no part raises "not supported".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attnlens.model.decoding.heads import HeadRef
from attnlens.model.lenses.token_runs import (
    Search,
    TaskScores,
    TokenBatch,
    TokenRun,
    TokenSpace,
    without_attention,
)
from attnlens.record.attribution import LogitAttribution
from attnlens.record.decode import DecodeRun
from attnlens.record.errors import InputError
from attnlens.record.example import Example
from attnlens.record.next_tokens import NextTokens
from attnlens.record.projections import HeadProjections
from attnlens.record.trace import Kind, Trace

if TYPE_CHECKING:
    from attnlens.model.lenses.lens import Lens
    from attnlens.model.training.reports import Report
    from attnlens.model.training.snapshots import Snapshot, SnapshotScore


@dataclass(frozen=True)
class Predictor:
    """A decoder-only model's likeliest next tokens at each position."""

    of: Callable[[str, int], NextTokens]

    def next_tokens(self, text: str, k: int = 3) -> NextTokens:
        """Each position's k likeliest next tokens and their probabilities, the softmax of the
        model's own logits over the tokens `trace` reads (k ≤ 20)."""
        return self.of(text, k)


@dataclass(frozen=True)
class Projections:
    """One head's Q, K and V as its attention used them (our own models)."""

    of: Callable[[Trace, Kind, int, int], HeadProjections]

    def head_projections(self, trace: Trace, kind: Kind, layer: int, head: int) -> HeadProjections:
        """The head's Q, K and V on the tokens trace saw, by value."""
        return self.of(trace, kind, layer, head)


Scores = Callable[[Sequence[Example], Sequence[HeadRef], Search], TaskScores]


@dataclass(frozen=True)
class TaskModel:
    """A model trained on one of our tasks (model/training/tasks): the right answers are known."""

    name: str  # the task: reverse, sort, dates, translate
    reference_of: Callable[[str], Example | None]
    scores: Scores
    scores_many: Callable[
        [Sequence[Example], Sequence[Sequence[HeadRef]], Search], list[TaskScores]
    ]

    def reference(self, text: str) -> Example | None:
        """The right output for text and the true source of each output token; None where
        the task cannot tell (a text it does not read)."""
        return self.reference_of(text)

    def task_scores(
        self, examples: Sequence[Example], ablate: Sequence[HeadRef] = (), search: Search = "greedy"
    ) -> TaskScores:
        """Exact match (greedy or beam search) and the teacher-forced log-likelihood of each
        example's reference target, with the ablated heads zeroed."""
        return self.scores(examples, ablate, search)

    def task_scores_many(
        self,
        examples: Sequence[Example],
        ablations: Sequence[Sequence[HeadRef]],
        search: Search = "greedy",
    ) -> list[TaskScores]:
        """`task_scores` once per set of ablated heads, the sets side by side where the model
        can (each result equal to its own run, to float rounding)."""
        return self.scores_many(examples, ablations, search)


@dataclass(frozen=True)
class Evaluation:
    """The model measured again: our task models, and our language model lm."""

    of: Callable[[int, int, str], Report]

    def evaluate(self, n: int, seed: int, suite: str = "held-out") -> Report:
        """On n fresh held-out examples of its task, or on n examples of each kind of its hard
        suite (`suite="hard"`: repeats, edge lengths, mixed case)."""
        return self.of(n, seed, suite)


@dataclass(frozen=True)
class Training:
    """Checkpoints kept from along training (`attnlens train`), earliest first."""

    snapshots_of: Callable[[], list[Snapshot]]
    snapshot_of: Callable[[int], Lens]
    scores_of: Callable[[], list[SnapshotScore]]
    loss_of: Callable[[], tuple[list[int], list[float]]]

    def snapshots(self) -> list[Snapshot]:
        return self.snapshots_of()

    def snapshot(self, step: int) -> Lens:
        """The model as it was after `step` training steps (an InputError names the steps kept)."""
        return self.snapshot_of(step)

    def snapshot_scores(self) -> list[SnapshotScore]:
        """Each snapshot measured on held-out examples of the model's task ([] without one)."""
        return self.scores_of()

    def loss_curve(self) -> tuple[list[int], list[float]]:
        """(steps, training loss) as training recorded it."""
        return self.loss_of()


@dataclass(frozen=True)
class TokenRuns:
    """What the head experiments run on: batches of token ids in, attention and
    log-probabilities (an encoder-only model: its last hidden states) out, by value."""

    space: Callable[[], TokenSpace]
    ids: Callable[[str], tuple[int, ...]]
    run: Callable[[TokenBatch, Sequence[HeadRef]], TokenRun]

    def token_space(self) -> TokenSpace:
        """How this model's sequences are made of ids."""
        return self.space()

    def token_ids(self, text: str) -> tuple[int, ...]:
        """The one sequence of ids the model reads for text, its prefix and suffix included
        (an encoder-decoder: its source)."""
        return self.ids(text)

    def run_tokens(self, batch: TokenBatch) -> TokenRun:
        """Attention and log-probabilities of a batch of id sequences, padded to the longest."""
        return self.run(batch, ())


@dataclass(frozen=True)
class Ablation:
    """Heads ablated: their output zeroed before W^O (our models through their head mask,
    Hugging Face models in a private copy), never by changing the shared model."""

    run: Callable[[TokenBatch, Sequence[HeadRef]], TokenRun]
    many: Callable[[TokenBatch, Sequence[Sequence[HeadRef]]], list[TokenRun]] | None = None

    def run_tokens(self, batch: TokenBatch, ablate: Sequence[HeadRef]) -> TokenRun:
        """`TokenRuns.run_tokens` with the ablated heads zeroed (checked against the model: an
        InputError names a missing head)."""
        return self.run(batch, ablate)

    def run_ablations(
        self, batch: TokenBatch, ablations: Sequence[Sequence[HeadRef]]
    ) -> list[TokenRun]:
        """The batch once per set of ablated heads, attention left out: the outputs the head
        experiments compare. Side by side where the model can, each result equal to its own
        run (to float rounding); else one set at a time."""
        if self.many is not None:
            return self.many(batch, ablations)
        return [without_attention(self.run(batch, ablate)) for ablate in ablations]


@dataclass(frozen=True)
class Samples:
    """Inputs of the kind the model was made for (its task's sources, held-out text)."""

    of: Callable[[int, int], list[str]]

    def sample_texts(self, n: int, seed: int) -> list[str]:
        return self.of(n, seed)


Tokens = tuple[str, ...]


@dataclass(frozen=True)
class Attribution:
    """Which heads wrote a token: a decoder's logit of one token split into each head's direct
    part, beside the embeddings', biases' and MLPs' (record/attribution.py), by value."""

    of: Callable[[Tokens | None, Tokens, str], LogitAttribution]  # (source, decoder, token)
    tokens_of: Callable[[str, str | None], tuple[Tokens | None, Tokens]]

    def at_step(
        self, run: DecodeRun, step: int, token: str | None = None, row: int = 0
    ) -> LogitAttribution:
        """The logit of `token` at a decode run's step, on live row `row`'s prefix (default
        token: the one that row's likeliest beam chose); any candidate of that step may be
        asked about, or any token of the vocabulary."""
        if not 0 <= step < len(run.steps):
            last = len(run.steps) - 1
            raise InputError(f"step {step} does not exist: the run has steps 0-{last}")
        rows = len(run.steps[step].candidates)
        if not 0 <= row < max(rows, 1):
            raise InputError(f"row {row} does not exist at step {step}: it has rows 0-{rows - 1}")
        chosen = token if token is not None else chosen_token(run, step, row)
        return self.of(run.src_tokens, run.keys(step, row), chosen)

    def at_text(self, text: str, token: str, target: str | None = None) -> LogitAttribution:
        """The logit of `token` as the next token after text (then target, an
        encoder-decoder's decoder input; without one, its first output token)."""
        source, tokens = self.tokens_of(text, target)
        return self.of(source, tokens, token)


def chosen_token(run: DecodeRun, step: int, row: int) -> str:
    """The token a live row's likeliest extension took at a step (its top candidate where no
    beam extends it)."""
    record = run.steps[step]
    beams = [b for b in record.beams if (b.parent or 0) == row]
    if beams:
        return beams[0].token
    return record.candidates[row][0].token
