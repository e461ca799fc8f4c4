"""The contract every loaded model keeps, whatever its origin (docs/python.md).

The core every model has: `trace`, `decode`, its tokens (`text_of`, `display_tokens`), its
names (`info`, `name`, `fingerprint`) and `capabilities`: plain facts, and the optional parts
(model/lenses/parts.py) as objects, each None where the model lacks it, with the reason fit to
show. Front ends ask `capabilities`; they never test a lens' class, reach inside it, or catch
an error to find out what a model can do.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from attnlens.model.decoding.request import (
    DEFAULT_STRATEGY,
    DecodeRequest,
    DecodeSettings,
    ModelLimits,
    StrategyName,
    resolve,
)
from attnlens.model.lenses.parts import (
    Ablation,
    Attribution,
    Evaluation,
    Predictor,
    Projections,
    Samples,
    TaskModel,
    TokenRuns,
    Training,
)
from attnlens.record.decode import DecodeRun
from attnlens.record.errors import InputError
from attnlens.record.trace import Kind, ModelInfo, Trace

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
class TraceInput:
    """What a trace reads, as `Lens.trace` was given it: the text, a target as text or as token
    strings, a sentence pair's second text."""

    text: str
    target: str | None = None
    target_tokens: Sequence[str] | None = None
    pair: str | None = None


@dataclass(frozen=True)
class DecodePlan:
    """Decoding prepared for one input: what the settings are checked against, and the run."""

    limits: ModelLimits
    run: Callable[[DecodeSettings], DecodeRun]


# Why a model lacks a part, where its lens gives no reason of its own ({name}: the model's).
WHY_NOT = {
    "decode": "{name} is an encoder-only model: it reads a text but writes none",
    "predictor": "{name} is not a decoder-only model: next-token predictions at each position "
    "come from a model that continues text (lm, GPT-2, Llama …)",
    "projections": "step-by-step attention needs one of attnlens' own models, not {name}",
    "task": "{name} was not trained on one of our tasks",
    "evaluation": "{name} was not trained on one of our tasks nor is it our language model lm",
    "training": "{name} has no training snapshots (a snapshots/step-NNNNNN/ folder beside "
    "the model)",
    "token_runs": "{name} does not run on token ids",
    "ablation": "no head of {name} can be ablated",
    "samples": "attnlens has no inputs of {name}'s kind to sample",
    "attribution": "{name} writes no text: which heads wrote a token is asked of a decoder",
}


@dataclass(frozen=True)
class Capabilities:
    """What a model can do: plain facts, then its optional parts, each an object or None with
    the reason in `why_not` (`Capabilities.of` fills it in)."""

    kinds: tuple[Kind, ...]  # the attention it records, in the record's order
    default_kind: Kind  # the kind a view opens on (ModelInfo.default_kind)
    self_kind: Kind  # the self-attention over the text it reads (ModelInfo.self_kind)
    decodes: bool  # writes text: greedy, beam search, sampling (not an encoder-only model)
    takes_target: bool  # an encoder-decoder: trace can be teacher-forced on a target
    reads_pairs: bool  # trace takes a sentence pair (BERT-style segment ids)
    predictor: Predictor | None = None  # each position's likeliest next tokens (decoder-only)
    projections: Projections | None = None  # one head's Q, K and V (our own models)
    task: TaskModel | None = None  # one of our tasks: references, task scores, alignment
    evaluation: Evaluation | None = None  # measured again (our task models and lm)
    training: Training | None = None  # snapshots from along training (the Training page)
    token_runs: TokenRuns | None = None  # what the head experiments run on
    ablation: Ablation | None = None  # heads ablated
    samples: Samples | None = None  # inputs of the model's kind
    attribution: Attribution | None = None  # which heads wrote a token (decoders)
    why_not: Mapping[str, str] = field(default_factory=dict)  # part → why it is None

    @classmethod
    def of(
        cls,
        info: ModelInfo,
        *,
        reads_pairs: bool = False,
        predictor: Predictor | None = None,
        projections: Projections | None = None,
        task: TaskModel | None = None,
        evaluation: Evaluation | None = None,
        training: Training | None = None,
        token_runs: TokenRuns | None = None,
        ablation: Ablation | None = None,
        samples: Samples | None = None,
        attribution: Attribution | None = None,
        reasons: Mapping[str, str] | None = None,
    ) -> Capabilities:
        """The facts from the record's ModelInfo, the parts as given; each part left None gets
        the lens' reason, or WHY_NOT's."""
        kinds = info.kinds
        facts = cls(
            kinds, info.default_kind, info.self_kind, "decoder_self" in kinds, "cross" in kinds,
            reads_pairs, predictor, projections, task, evaluation, training, token_runs,
            ablation, samples, attribution,
        )  # fmt: skip
        missing = [p for p in WHY_NOT if p != "decode" and getattr(facts, p) is None]
        missing += [] if facts.decodes else ["decode"]
        given = reasons or {}
        why = {p: given.get(p) or WHY_NOT[p].format(name=info.name) for p in missing}
        return replace(facts, why_not=why)

    def reason(self, part: str) -> str:
        """Why the model lacks `part` (a field name, or "decode"), fit to show; "" when it
        has it."""
        return self.why_not.get(part, "")


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
    def capabilities(self) -> Capabilities:
        """What this model can do (Capabilities); computed on demand, nothing stored."""

    @property
    @abstractmethod
    def max_tokens(self) -> int:
        """The longest input, in tokens, this model accepts."""

    def trace(
        self,
        text: str,
        target: str | None = None,
        *,
        target_tokens: Sequence[str] | None = None,
        pair: str | None = None,
        record: RecordMode = "auto",
    ) -> Trace:
        """Run the model on text (teacher-forced on target when given) and record attention.
        Without a target, an encoder-decoder is teacher-forced on its own greedy output, as
        `decode` gives it.

        target_tokens: the target as token strings, e.g. a decode record's output_tokens (a
        trailing end token is the last prediction), read back exactly where re-tokenizing
        the output text would not give the same tokens. pair: the second text of a sentence
        pair, with its own segment ids (capabilities.reads_pairs). record: which record is
        kept (`check_mode`: weights, scores or auto, the weights where they fit the budget).
        """
        return self._trace(TraceInput(text, target, target_tokens, pair), check_mode(record))

    @abstractmethod
    def _trace(self, given: TraceInput, record: RecordMode) -> Trace:
        """`trace`'s work, its mode checked: each kind of model records its own way."""

    def decode(
        self, text: str, strategy: StrategyName = DEFAULT_STRATEGY, **settings: Any
    ) -> DecodeRun:
        """Decode text (greedy, beam or sample), recording every step's beams and attention
        (capabilities.decodes: an encoder-only model refuses with an InputError).

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

    @abstractmethod
    def text_of(self, tokens: Sequence[str]) -> str:
        """The text output tokens spell, special tokens dropped (what an "Output:" line shows)."""

    def display_tokens(self, tokens: Sequence[str]) -> list[str]:
        """How the model's token strings read to a person (subword marks resolved); the
        records keep the model's own strings."""
        return list(tokens)

    def fingerprint(self) -> str:
        """Names these exact weights: experiment results are cached under it."""
        return f"{self.name}:{id(self)}"  # without a better name, good for this process only


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
