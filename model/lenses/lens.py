"""The contract every loaded model keeps, whatever its origin (docs/python.md).

Front ends ask the lens what the model can do (`lens.capabilities`, plain data) instead of
catching errors; they never test its class or reach inside it. A capability a model lacks still
answers with an InputError whose message says so, fit to show, when it is called anyway.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from attnlens.model.decoding.heads import HeadRef
from attnlens.model.decoding.request import (
    DEFAULT_STRATEGY,
    DecodeRequest,
    DecodeSettings,
    ModelLimits,
    StrategyName,
    resolve,
)
from attnlens.model.lenses.token_runs import (
    Search,
    TaskScores,
    TokenBatch,
    TokenRun,
    TokenSpace,
    without_attention,
)
from attnlens.record.decode import DecodeRun
from attnlens.record.errors import InputError
from attnlens.record.example import Example
from attnlens.record.next_tokens import NextTokens
from attnlens.record.projections import HeadProjections
from attnlens.record.trace import Kind, ModelInfo, Trace

if TYPE_CHECKING:
    from attnlens.model.training.evaluate import Report
    from attnlens.model.training.snapshots import Snapshot, SnapshotScore


RecordMode = Literal["weights", "scores", "auto"]
RECORD_MODES: tuple[RecordMode, ...] = ("weights", "scores", "auto")


def check_mode(record: object) -> RecordMode:
    """Which record a trace keeps: every head's `weights`; the `scores` they were computed
    from (record/scores.py: grows with T, any head exact on demand); or `auto`, the weights
    where they fit the record budget and the scores past it."""
    if record not in RECORD_MODES:
        raise InputError(f"record must be one of {', '.join(RECORD_MODES)}, got {record!r}")
    return record  # type: ignore[return-value]


@dataclass(frozen=True)
class DecodePlan:
    """Decoding prepared for one input: what the settings are checked against, and the run."""

    limits: ModelLimits
    run: Callable[[DecodeSettings], DecodeRun]


@dataclass(frozen=True)
class Capabilities:
    """What a model can do, as plain data: the pages and commands ask this, not the model's
    class or architecture, and never find out by catching an error."""

    kinds: tuple[Kind, ...]  # the attention it records, in the record's order
    default_kind: Kind  # the kind a view opens on (ModelInfo.default_kind)
    decodes: bool  # writes text: greedy, beam search, sampling (not an encoder-only model)
    takes_target: bool  # an encoder-decoder: trace can be teacher-forced on a target
    reads_pairs: bool  # trace takes a sentence pair (BERT-style segment ids)
    task: str | None  # one of our tasks: references, true sources, task scores, alignment
    evaluates: bool  # `evaluate` measures it again (our task models and lm)
    snapshots: bool  # checkpoints from along training (the Training page)
    step_by_step: bool  # `head_projections`: one head's Q, K and V (our own models)
    token_runs: bool  # the head experiments can run it on token ids
    why_no_ablation: str | None  # None: heads can be ablated; otherwise why not, fit to show

    @property
    def ablates(self) -> bool:
        return self.why_no_ablation is None


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
    def capabilities(self) -> Capabilities:
        """What this model can do (see Capabilities); computed on demand, nothing stored."""
        info = self.info
        return Capabilities(
            kinds=info.kinds,
            default_kind=info.default_kind,
            decodes=info.architecture != "encoder",
            takes_target=info.architecture == "encoder-decoder",
            reads_pairs=self.reads_pairs,
            task=self.task_name,
            evaluates=self.evaluates,
            snapshots=bool(self.snapshots()),
            step_by_step=self.step_by_step,
            token_runs=self.token_runs,
            why_no_ablation=self.why_no_ablation(),
        )

    evaluates: bool = False  # whether `evaluate` answers (a subclass that measures says so)
    step_by_step: bool = False  # whether `head_projections` answers
    token_runs: bool = False  # whether `token_space`, `token_ids` and `run_tokens` answer

    @property
    @abstractmethod
    def max_tokens(self) -> int:
        """The longest input, in tokens, this model accepts."""

    @abstractmethod
    def trace(
        self,
        text: str,
        target: str | None = None,
        *,
        target_tokens: Sequence[str] | None = None,
        pair: str | None = None,
        record: RecordMode = "weights",
    ) -> Trace:
        """Run the model on text (teacher-forced on target when given) and record attention.
        Without a target, an encoder-decoder is teacher-forced on its own greedy output, as
        `decode` gives it.

        target_tokens: the target as token strings, e.g. a decode record's output_tokens (a
        trailing end token is the last prediction), read back exactly where re-tokenizing
        the output text would not give the same tokens. pair: the second text of a sentence
        pair, with its own segment ids (encoder models that read pairs, such as BERT).
        record: which record is kept (`check_mode`: weights, scores or auto).
        """

    def decode(
        self, text: str, strategy: StrategyName = DEFAULT_STRATEGY, **settings: Any
    ) -> DecodeRun:
        """Decode text (greedy, beam or sample), recording every step's beams and attention.

        The keywords are the fields of `attnlens.model.decoding.request.DecodeRequest` (the
        flags of `attnlens decode`); they are checked against this model and input, and the
        record's params replay the run: `lens.decode(text, run.strategy, **run.params)`.
        """
        return self.decode_request(text, DecodeRequest.from_kwargs(strategy=strategy, **settings))

    def decode_request(self, text: str, request: DecodeRequest) -> DecodeRun:
        """Decode text as a DecodeRequest asks."""
        plan = self.decode_plan(check_text(text))
        return plan.run(resolve(request, plan.limits))

    @abstractmethod
    def decode_plan(self, text: str) -> DecodePlan:
        """Check text and prepare decoding it; bad input raises InputError here."""

    def next_tokens(self, text: str, k: int = 3) -> NextTokens:
        """Each position's k likeliest next tokens and their probabilities, the softmax of the
        model's own logits over the tokens `trace` reads (a decoder-only model; k ≤ 20)."""
        raise InputError(
            f"{self.name} is not a decoder-only model: next-token predictions at each position "
            "come from a model that continues text (lm, GPT-2, Llama …)"
        )

    @abstractmethod
    def text_of(self, tokens: Sequence[str]) -> str:
        """The text output tokens spell, special tokens dropped (what an "Output:" line shows)."""

    def display_tokens(self, tokens: Sequence[str]) -> list[str]:
        """How the model's token strings read to a person (subword marks resolved); the
        records keep the model's own strings."""
        return list(tokens)

    @property
    def reads_pairs(self) -> bool:
        """Whether trace takes a sentence pair (`pair=`, the app's second text box): encoder
        models such as BERT, which tell the two texts apart by segment ids."""
        return False

    @property
    def task_name(self) -> str | None:
        """The task the model was trained on, when attnlens can draw examples of it."""
        return None

    def reference(self, text: str) -> Example | None:
        """The right output for text and the true source of each output token, for a model
        trained on one of our tasks that can tell; None otherwise."""
        return None

    def head_projections(self, trace: Trace, kind: Kind, layer: int, head: int) -> HeadProjections:
        """One head's Q, K and V on the tokens trace saw, as the model's attention used them."""
        raise InputError(
            f"step-by-step attention needs one of attnlens' own models, not {self.name}"
        )

    def evaluate(self, n: int, seed: int, suite: str = "held-out") -> Report:
        """The model measured again on n fresh held-out examples of its task, or on n examples
        of each kind of its hard suite (`suite="hard"`: repeats, edge lengths, mixed case)."""
        raise InputError(
            f"{self.name!r} was not trained on one of our tasks nor is it our language model lm"
        )

    def snapshots(self) -> list[Snapshot]:
        """Checkpoints kept from along training, earliest first ([] when there are none)."""
        return []

    def snapshot(self, step: int) -> Lens:
        """The model as it was after `step` training steps."""
        steps = ", ".join(str(s.step) for s in self.snapshots()) or "none"
        raise InputError(f"{self.name} has no snapshot at step {step} (it has: {steps})")

    def snapshot_scores(self) -> list[SnapshotScore]:
        """Each snapshot measured on held-out examples of the model's task ([] without one)."""
        return []

    def loss_curve(self) -> tuple[list[int], list[float]]:
        """(steps, training loss) as training recorded it; empty lists when unknown."""
        return [], []

    # What the head experiments (analysis/experiments/) ask of a model: runs on token ids, heads
    # ablated (their output zeroed before W^O, never by changing the shared model), results by
    # value.

    def fingerprint(self) -> str:
        """Names these exact weights: experiment results are cached under it."""
        return f"{self.name}:{id(self)}"  # without a better name, good for this process only

    def token_space(self) -> TokenSpace:
        """How this model's sequences are made of ids."""
        raise InputError(f"{self.name} does not run on token ids")

    def token_ids(self, text: str) -> tuple[int, ...]:
        """The one sequence of ids the model reads for text, its prefix and suffix included
        (an encoder-decoder: its source)."""
        raise InputError(f"{self.name} does not run on token ids")

    def run_tokens(self, batch: TokenBatch, ablate: Sequence[HeadRef] = ()) -> TokenRun:
        """Attention and log-probabilities (an encoder-only model: its last hidden states) of a
        batch of id sequences, the ablated heads' outputs zeroed (checked against the model: an
        InputError names a missing head)."""
        raise InputError(f"{self.name} does not run on token ids")

    def run_ablations(
        self, batch: TokenBatch, ablations: Sequence[Sequence[HeadRef]]
    ) -> list[TokenRun]:
        """`run_tokens` of the batch once per set of ablated heads, attention left out (None):
        the outputs the head experiments compare. Here one set at a time; a lens may run the
        sets side by side, each result equal to its own run (to float rounding)."""
        return [without_attention(self.run_tokens(batch, ablate)) for ablate in ablations]

    def why_no_ablation(self) -> str | None:
        """None when heads can be ablated; otherwise why not, fit to show a user."""
        return None

    def sample_texts(self, n: int, seed: int) -> list[str]:
        """n inputs of the kind the model was made for (its task's sources, held-out text)."""
        raise InputError(f"attnlens has no inputs of {self.name}'s kind to sample")

    def task_scores(
        self, examples: Sequence[Example], ablate: Sequence[HeadRef] = (), search: Search = "greedy"
    ) -> TaskScores:
        """Exact match (greedy or beam search) and the teacher-forced log-likelihood of each
        example's reference target, with the ablated heads zeroed."""
        raise InputError(f"{self.name!r} was not trained on one of our tasks")

    def task_scores_many(
        self,
        examples: Sequence[Example],
        ablations: Sequence[Sequence[HeadRef]],
        search: Search = "greedy",
    ) -> list[TaskScores]:
        """`task_scores` once per set of ablated heads. Here one set at a time; a lens may run
        the sets side by side, each result equal to its own run (to float rounding)."""
        return [self.task_scores(examples, ablate, search) for ablate in ablations]


def check_text(text: object, what: str = "text") -> str:
    """The input text, or an InputError for anything that is not text (or not valid Unicode:
    a lone surrogate cannot be tokenized, shown or saved)."""
    if not isinstance(text, str):
        raise InputError(f"{what} must be a string, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InputError(
            f"{what} holds a character that is not valid Unicode at position {err.start} "
            f"({text[err.start]!r}); retype or remove it"
        ) from None
    return text


def check_target(target: object, target_tokens: object) -> tuple[str, ...] | None:
    """The target tokens as a tuple of strings (None without), after checking that at most
    one form of target is given."""
    if target is not None:
        check_text(target, "target")
    if target_tokens is None:
        return None
    if target is not None:
        raise InputError("give the target as text or as tokens, not both")
    if isinstance(target_tokens, str) or not all(isinstance(t, str) for t in target_tokens):  # type: ignore[attr-defined]
        raise InputError("target tokens must be a list of token strings")
    return tuple(target_tokens)  # type: ignore[arg-type]


def ids_of_tokens(tokens: Sequence[str], vocab: Mapping[str, int], name: str) -> list[int]:
    """The ids of token strings, or an InputError naming the first one the model lacks."""
    for token in tokens:
        if token not in vocab:
            raise InputError(f"target token {token!r} is not in {name}'s vocabulary")
    return [vocab[t] for t in tokens]


def refuse_pair(pair: object, name: str, instead: str) -> None:
    """An InputError when a model that reads one text is given a sentence pair."""
    if pair is not None:
        raise InputError(
            f"{name} reads one text: sentence pairs (a second text with its own segment ids) "
            f"are read by encoder models such as BERT; {instead}"
        )


def forced_past_end(
    settings: DecodeSettings, steps: Sequence[object], names: Sequence[str]
) -> list[str]:
    """A warning for each forced token the output ended before reaching (the record says
    so rather than drop the request silently)."""
    return [
        f"forced {names[token]!r} at step {step} was not used: the output ended after "
        f"{len(steps)} step{'s' * (len(steps) != 1)}"
        for step, token in settings.force
        if step >= len(steps)
    ]
