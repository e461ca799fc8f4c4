"""What our two own lenses share: a checkpoint folder, a tokenizer of ours, the memory budget,
decoding through the shared loop, training snapshots, evaluation and Q/K/V by return value."""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import torch
from torch import nn

from attnlens.model.budget import check_budget, decode_bytes, trace_bytes
from attnlens.model.decoding.heads import HeadRef, check_head
from attnlens.model.decoding.loop import Vocabulary, greedy_output, search
from attnlens.model.decoding.request import DecodeRequest, DecodeSettings, ModelLimits, resolve
from attnlens.model.decoding.stepper import Stepper
from attnlens.model.lenses.lens import (
    Capabilities,
    Lens,
    RecordMode,
    TraceInput,
    check_mode,
    forced_past_end,
)
from attnlens.model.lenses.own_norms import own_norms
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
from attnlens.model.lenses.tensors import numpy_of
from attnlens.model.lenses.token_runs import TokenBatch, TokenRun, TokenSpace
from attnlens.model.net import checkpoint
from attnlens.model.net.attention import QKV
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.tokenizer import (
    SPECIALS,
    Encoding,
    Tokenizer,
    WordTokenizer,
)
from attnlens.model.training import snapshots as kept
from attnlens.model.training.batch import pad_rows
from attnlens.model.training.snapshots import Snapshot, SnapshotScore
from attnlens.record.decode import DecodeRun
from attnlens.record.errors import InputError, quoted
from attnlens.record.projections import HeadProjections
from attnlens.record.scores import LayerScores, MaskRule
from attnlens.record.trace import KINDS, Architecture, Kind, ModelInfo, Trace

NetT = TypeVar("NetT", bound=nn.Module)
# what a training snapshot takes from its finished model's config.json, which it lacks: how
# typed input is read (the task's normalising, the source length it was trained on)
READS_LIKE = ("task", "max_source_len")
ABLATION_ROWS = 512  # rows of one forward pass when sets of ablated heads run side by side


class OwnLens(Lens, Generic[NetT]):
    """One of attnlens' own models, saved by `attnlens train` as config.json + safetensors."""

    architecture: Architecture

    def __init__(
        self,
        folder: Path,
        device: torch.device,
        name: str | None = None,
        inherited: Mapping[str, Any] | None = None,
    ) -> None:
        """inherited: entries of config.json the folder's own lacks and takes from another
        model's (a snapshot reads its input as the finished model does: READS_LIKE)."""
        self.folder, self.device = folder, device
        described = checkpoint.describe(folder)  # checked, and within the model budget
        self.meta: dict[str, Any] = {**(inherited or {}), **described.meta}
        self.tokenizer: Tokenizer = described.tokenizer
        self.net: NetT = self.build(described.config)
        checkpoint.load_weights(self.net, folder / checkpoint.WEIGHTS, device)
        c = self.config
        shown_name = name or str(self.meta.get("name", folder.name))
        self.info = ModelInfo(shown_name, self.architecture, c.N, c.h, c.d_model)
        self.description = str(self.meta.get("description", ""))
        self.loaded()

    def loaded(self) -> None:
        """What an architecture reads from its config.json once the model is loaded."""

    @property
    def capabilities(self) -> Capabilities:
        """Every own model: Q, K and V, ablation by head mask, snapshots; its architecture's."""
        return Capabilities.of(
            self.info,
            predictor=self._predictor(),
            projections=Projections(self._head_projections),
            task=self._task_model(),
            evaluation=self._evaluation(),
            training=self._training(),
            token_runs=TokenRuns(self._token_space, self._token_ids, self._run_tokens),
            ablation=Ablation(self._run_tokens, self._run_ablations),
            samples=self._samples(),
            attribution=self._attribution(),
        )

    def _attribution(self) -> Attribution | None:  # a decoder's: which heads wrote a token
        return None

    def _predictor(self) -> Predictor | None:  # an architecture's own parts: none by default
        return None

    def _task_model(self) -> TaskModel | None:
        return None

    def _evaluation(self) -> Evaluation | None:
        return None

    def _samples(self) -> Samples | None:
        return None

    def _training(self) -> Training | None:
        if not self._snapshots():
            return None
        return Training(self._snapshots, self._snapshot, self._snapshot_scores, self._loss_curve)

    @abstractmethod
    def _run_tokens(self, batch: TokenBatch, ablate: Sequence[HeadRef] = ()) -> TokenRun:
        """Attention and log-probabilities of a batch of id sequences, ablated heads zeroed."""

    @abstractmethod
    def _run_ablations(
        self, batch: TokenBatch, ablations: Sequence[Sequence[HeadRef]]
    ) -> list[TokenRun]:
        """The batch once per set of ablated heads, side by side, attention left out."""

    @abstractmethod
    def build(self, config: TransformerConfig) -> NetT:
        """The network a checkpoint of this architecture holds, before its weights."""

    @property
    def config(self) -> TransformerConfig:
        config: TransformerConfig = self.net.config  # type: ignore[assignment]
        return config

    @property
    def max_tokens(self) -> int:
        return self.config.max_len - 1  # one position is kept for the start or end token

    def text_of(self, tokens: Sequence[str]) -> str:
        return self.tokenizer.spell(tokens)

    def encode(self, text: str, what: str, limit: int) -> tuple[Encoding, list[str]]:
        """Text to ids within `limit` tokens; pieces outside the vocabulary (special tokens'
        names included: typed text never becomes a special token) become a warning."""
        tok = self.tokenizer
        n = tok.count(text)
        if n > limit:
            raise InputError(
                f"{what} has {n} {tok.unit}s but {self.info.name} takes at most {limit}"
            )
        enc = tok.encode(text)
        warnings = []
        if enc.specials:
            one = len(set(enc.specials)) == 1
            whose = "a special token's name" if one else "special tokens' names"
            warnings.append(
                f"{what}: {quoted(enc.specials)} typed, {whose}; typed text never becomes a "
                "special token (only the model places them), so it was read as <unk>"
            )
        unknown = [p for p in enc.unknown if p not in enc.specials]
        if unknown:
            warnings.append(self.unknown_warning(what, unknown))
        return enc, warnings

    def unknown_warning(self, what: str, unknown: Sequence[str]) -> str:
        """What the user is told about pieces read as <unk>."""
        tok = self.tokenizer
        known = f"; it knows {len(tok.pieces)}: {' '.join(tok.pieces)}"
        return (
            f"{what} {tok.unit}s outside the vocabulary were read as <unk>: {quoted(unknown)}"
            + (known if isinstance(tok, WordTokenizer) else "")
        )

    def run(
        self,
        stepper: Stepper[Any],
        settings: DecodeSettings,
        source: Sequence[int] | None,
        prefix: Sequence[int],
        shown: Sequence[str],
        warnings: Sequence[str],
    ) -> DecodeRun:
        """Check the record fits the memory budget, search, and wrap the result as a record.

        shown: the tokens the record lists as its input (the source, or a decoder-only prompt).
        """
        info, tok = self.info, self.tokenizer
        context = len(source) if source is not None else len(prefix)
        needed = decode_bytes(
            info.n_layers, info.n_heads, context, settings.max_len, settings.width
        )
        check_budget(needed, "decode", "use a shorter max length or fewer beams")
        steps, hypotheses = search(stepper, settings, source, prefix, self.vocabulary())
        return DecodeRun(
            settings.strategy, settings.params(tok.vocab), tuple(shown), hypotheses, steps, info,
            (*warnings, *forced_past_end(settings, steps, tok.vocab)),
            tuple(tok.token(i) for i in prefix),
        )  # fmt: skip

    def vocabulary(self) -> Vocabulary:
        """How decoding names and ends tokens. <pad>, <s> and <unk> are never targets in
        training; were one chosen, the output text (which drops specials) would no longer spell
        the output tokens, so they are banned."""
        tok = self.tokenizer
        banned = (tok.pad_id, tok.bos_id, tok.unk_id)
        return Vocabulary(tok.vocab, tok.eos_id, lambda ids: tok.decode(list(ids)), banned)

    def greedy_text(
        self,
        stepper: Stepper[Any],
        limits: ModelLimits,
        source: Sequence[int] | None,
        prefix: Sequence[int],
    ) -> str:
        """The text `decode` gives by default (greedy), found without recording the steps."""
        settings = resolve(DecodeRequest.from_kwargs(strategy="greedy"), limits)
        vocab = self.vocabulary()
        return vocab.detokenize(greedy_output(stepper, settings, source, prefix, vocab))

    def _head_projections(self, trace: Trace, kind: Kind, layer: int, head: int) -> HeadProjections:
        """Re-run the model on the tokens trace saw, keeping each attention's Q, K and V: the
        very tensors the attention computed with, returned by value."""
        n_layers, n_heads = self.info.n_layers, self.info.n_heads
        if kind not in KINDS:
            raise InputError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in (layer, head)):
            raise InputError(f"layer and head must be whole numbers, got {layer!r} and {head!r}")
        if not (0 <= layer < n_layers and 0 <= head < n_heads):
            raise InputError(
                f"layer {layer}, head {head} does not exist: the model has layers "
                f"0-{n_layers - 1} and heads 0-{n_heads - 1}"
            )
        qkv, mask = self.attention_inputs(trace, kind, layer)
        return HeadProjections(
            kind, layer, head, numpy_of(qkv.q[0, head]), numpy_of(qkv.k[0, head]),
            numpy_of(qkv.v[0, head]),
            mask,
        )  # fmt: skip

    def _trace(self, given: TraceInput, record: RecordMode) -> Trace:
        """The stack's own weights (`_weights`), kept as `record` asks (`recorded`)."""
        return self.recorded(self._weights(given), record)

    @abstractmethod
    def _weights(self, given: TraceInput) -> Trace:
        """Every head's weights for text, teacher-forced as the model's kind does it."""

    def recorded(self, trace: Trace, record: RecordMode) -> Trace:
        """The trace as `record` asks. Our models' weights always fit the budget, so `auto`
        keeps them; `scores` keeps what each layer computed them from instead: its Q and K,
        its mask as a rule and each row's log-sum-exp (record/scores.py)."""
        trace = replace(trace, norms=own_norms(self.net, trace, self.attention_inputs))
        if check_mode(record) != "scores":
            return trace
        stacks = {
            kind: tuple(self._layer_scores(trace, kind, lay) for lay in range(self.layers(kind)))
            for kind in trace.kinds
        }
        gone = {k: None for k in KINDS} | {f"{k}_mask": None for k in KINDS}
        return replace(trace, **gone, scores=stacks)  # type: ignore[arg-type]

    def layers(self, kind: Kind) -> int:
        return self.info.shape(kind)[0]

    def _layer_scores(self, trace: Trace, kind: Kind, layer: int) -> LayerScores:
        """One layer's scores from its own Q and K (§3.2.1: QKᵀ/√d_k under the mask)."""
        qkv, mask = self.attention_inputs(trace, kind, layer)
        q, k = numpy_of(qkv.q[0]), numpy_of(qkv.k[0])  # (h, Q, d_k), (h, K, d_k)
        # in float64, as the record's weights are rebuilt: each row's lse exact to the record
        wide = torch.from_numpy(q).double() @ torch.from_numpy(k).double().transpose(-2, -1)
        scores = (wide / np.sqrt(q.shape[-1])).masked_fill(~torch.as_tensor(mask), float("-inf"))
        lse = torch.logsumexp(scores, dim=-1).numpy()  # (h, Q) float64
        return LayerScores(q, k, lse, 1 / float(np.sqrt(q.shape[-1])), MaskRule.of(mask))

    @abstractmethod
    def attention_inputs(self, trace: Trace, kind: Kind, layer: int) -> tuple[QKV, np.ndarray]:
        """One layer's Q, K, V of one kind on trace's tokens, and the (T_q, T_k) mask applied."""

    def ids_of(self, tokens: Sequence[str]) -> torch.Tensor:
        """A record's token strings back to ids, (1, T)."""
        index = self.tokenizer.index
        return torch.tensor([[index[t] for t in tokens]], device=self.device)

    def _snapshots(self) -> list[Snapshot]:
        return kept.snapshots(self.folder)

    def _snapshot(self, step: int) -> Lens:
        """A snapshot loads as a model of this architecture, named after the finished model."""
        found = {s.step: s for s in self._snapshots()}
        if step not in found:
            steps = ", ".join(str(s) for s in found) or "none"
            raise InputError(f"{self.name} has no snapshot at step {step} (it has: {steps})")
        reads = {key: self.meta[key] for key in READS_LIKE if key in self.meta}
        return type(self)(found[step].path, self.device, f"{self.name} @ step {step}", reads)

    @property
    def scored_task(self) -> str | None:
        """The task it was trained on, where attnlens can draw held-out examples of it."""
        task = self.meta.get("task")
        return str(task) if kept.scorable(task) else None

    def _snapshot_scores(self) -> list[SnapshotScore]:
        task = self.scored_task
        return [] if task is None else kept.score_snapshots(self._snapshots(), task)

    def _loss_curve(self) -> tuple[list[int], list[float]]:
        return kept.loss_curve(self.meta)

    # token-id runs for the head experiments

    head_kinds: tuple[Kind, ...]  # the kinds of attention this architecture has
    prefix_ids: tuple[int, ...] = ()  # what the one sequence of token_ids starts with
    suffix_ids: tuple[int, ...] = ()  # ... and ends with

    def fingerprint(self) -> str:
        """The weights' and description's SHA-256 (a few MB: milliseconds)."""
        digest = hashlib.sha256()
        for part in (checkpoint.WEIGHTS, checkpoint.DESCRIPTION):
            digest.update((self.folder / part).read_bytes())
        return f"{self.name}@{digest.hexdigest()[:20]}"

    def _token_space(self) -> TokenSpace:
        tok = self.tokenizer
        ordinary = tuple(range(len(SPECIALS), len(tok)))
        start = tok.bos_id if self.architecture == "encoder-decoder" else None
        # erasing puts <pad> in the token's place: the padding mask then hides it from every
        # query (nothing draws on it), where <unk>, never seen in training, would derail all
        return TokenSpace(
            self.prefix_ids, self.suffix_ids, ordinary, tok.pad_id, tuple(tok.vocab), start
        )

    def _token_ids(self, text: str) -> tuple[int, ...]:
        enc, _ = self.encode(
            text, "text", self.max_tokens + 1 - len(self.prefix_ids + self.suffix_ids)
        )
        return (*self.prefix_ids, *enc.ids, *self.suffix_ids)

    def padded(self, rows: Sequence[Sequence[int]], what: str) -> tuple[torch.Tensor, np.ndarray]:
        """Id sequences as one padded (B, T) tensor and their lengths (B,), each id and
        length checked against the model."""
        if not rows or any(len(r) == 0 for r in rows):
            raise InputError(f"{what}: give at least one sequence, none of them empty")
        lengths = np.array([len(r) for r in rows])
        if lengths.max() > self.config.max_len:
            raise InputError(
                f"{what}: a sequence of {lengths.max()} tokens is longer than the "
                f"{self.config.max_len} positions of {self.name}"
            )
        vocab = len(self.tokenizer)
        bad = [i for r in rows for i in r if not 0 <= int(i) < vocab]
        if bad:
            raise InputError(f"{what}: id {bad[0]} is outside the vocabulary (0-{vocab - 1})")
        ids = pad_rows([[int(i) for i in r] for r in rows], self.tokenizer.pad_id)
        return ids.to(self.device), lengths

    def checked_heads(self, ablate: Sequence[HeadRef]) -> list[HeadRef]:
        """The heads to ablate, each checked against the model."""
        c = self.config
        for ref in ablate:
            check_head(ref, self.head_kinds, c.N, c.h)
        return list(ablate)

    def ablation_groups(
        self, ablations: Sequence[Sequence[HeadRef]], batch: int
    ) -> list[list[list[HeadRef]]]:
        """The sets of ablated heads, each checked, in groups whose copies of a batch of
        `batch` sequences make at most ABLATION_ROWS rows of one forward pass (one set at least)."""
        sets = [self.checked_heads(a) for a in ablations]
        size = max(1, ABLATION_ROWS // max(batch, 1))
        return [sets[i : i + size] for i in range(0, len(sets), size)]

    def check_batch_budget(self, batch: int, S: int, T: int) -> None:
        c = self.config
        needed = batch * trace_bytes(c.N, c.h, S, T)
        check_budget(needed, "experiment batch", "use fewer or shorter sequences")
