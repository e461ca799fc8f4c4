"""One teacher-forced forward pass per kind of model, recorded as a Trace from the model's own
output_attentions tensors, with the masks, positions and tokens as the model applied them."""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from attnlens.model.heap import give_back
from attnlens.model.lenses.hf.capture import (
    CAPTURE_HEADS,
    TAKE_NORMS,
    CapturedHeads,
    UnexpressibleError,
)
from attnlens.model.lenses.hf.encoding import Encoded, is_byte_level
from attnlens.model.lenses.hf.heads import HeadsError
from attnlens.model.lenses.hf.mapping import next_token_logprobs, stack_attention
from attnlens.model.lenses.hf.norms import InCall, trace_norms
from attnlens.model.lenses.hf.positions import Positions
from attnlens.model.lenses.hf.tokens import display_tokens
from attnlens.model.lenses.hf.twin import NOT_REGISTERED, kernel_twin
from attnlens.model.lenses.hf.windows import StackRules, stack_rules, unexplained_zeros
from attnlens.model.lenses.summaries import summarise
from attnlens.model.net.contributions import KeptFactors
from attnlens.record.norms import HeadNorms
from attnlens.record.picking import END_TOKENS, earlier_matches, special_keys
from attnlens.record.scores import LayerScores
from attnlens.record.trace import Architecture, Kind, ModelInfo, Trace

Recorded = dict[Kind, Any]  # kind → (L, H, Q, K) weights, or a tuple of LayerScores
Norms = tuple[dict[Kind, HeadNorms] | None, str | None]  # the norms, or why there are none


@dataclass(frozen=True)
class Masks:
    """One kind's mask as recorded: the union over layers, the layers' own when they differ,
    and what the record must say about them."""

    union: np.ndarray  # (Q, K) bool
    layers: np.ndarray | None  # (L, Q, K) bool, None when every layer applies `union`
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Runner:
    """What a forward pass needs besides the tokens."""

    model: PreTrainedModel
    info: ModelInfo
    positions: Positions
    device: torch.device
    rules: StackRules = field(default_factory=StackRules)  # the only stack's per-layer rules
    byte_level: bool = False  # token strings stand for bytes (Ġ = space)
    token_types: int = 0  # how many token types (segments) the model embeds; 0: takes none
    # the heads' factors of W^O, taken by the first trace with norms and kept for the next
    factors: KeptFactors = field(default_factory=KeptFactors, compare=False)

    def ids(self, ids: tuple[int, ...]) -> torch.Tensor:
        return torch.tensor([ids], dtype=torch.long, device=self.device)  # (1, N)

    def masks(self, kind: Kind, weights: np.ndarray, queries: int, keys: int) -> Masks:
        """The mask each layer applied (one unpadded sequence: causality and the config's
        windows), checked against the weights: allowed entries that got exactly 0 weight in
        every head mean a mask attnlens could not derive, and the record says so."""
        causal = kind == "decoder_self"
        rules = self.rules if kind != "cross" else StackRules()
        per_layer = rules.masks(queries, keys, causal, int(weights.shape[0]))
        stacked = np.stack(per_layer)  # (L, Q, K)
        union = np.asarray(stacked.any(axis=0))  # (Q, K)
        differ = not all(np.array_equal(m, union) for m in per_layer)
        warnings = list(rules.unknown())
        for layer, count in unexplained_zeros(weights, per_layer):
            warnings.append(
                f"{kind} layer {layer}: {count} entries the recorded mask allows got exactly 0 "
                "weight in every head; the model masks them in a way attnlens cannot derive"
            )
        return Masks(union, stacked if differ else None, tuple(warnings))

    def shown(self, tokens: tuple[str, ...]) -> tuple[str, ...]:
        """How a person reads the tokens (Ġ, ▁ and ## resolved; a space token visible)."""
        return tuple(display_tokens(tokens, self.byte_level))


def _record(
    run: Runner,
    src: Encoded | None,
    tgt: Encoded | None,
    recorded: Recorded,
    logprobs: np.ndarray | None,
    warnings: list[str],
    norms: Norms = (None, None),
) -> Trace:
    """A Trace of what one pass computed: masks per kind, positions, readable tokens. A kind
    recorded as LayerScores keeps them instead of its weights (its masks are their rules)."""
    give_back()  # the forward pass's freed buffers, before the summaries (model/heap.py)
    S, T = len(src.ids) if src else 0, len(tgt.ids) if tgt else 0
    sizes = {"encoder_self": (S, S), "decoder_self": (T, T), "cross": (T, S)}
    # each kind kept as scores: its summary (with its norms' overview where the norms were
    # taken, before it), and its layers' log-sum-exps made exact on the way
    carried = {k: n.carried for k, n in (norms[0] or {}).items()}
    summarised = {
        k: summarise(
            v, _matches(k, src, tgt), _ends(k, src, tgt), run.device, carried.get(k),
            special_keys(_keys(k, src, tgt)),
        )
        for k, v in recorded.items()
        if isinstance(v, tuple)
    }  # fmt: skip
    scores: dict[str, tuple[LayerScores, ...]] = {k: v[1] for k, v in summarised.items()}
    attention: dict[Kind, np.ndarray | None] = {
        k: v for k, v in recorded.items() if not isinstance(v, tuple)
    }
    masks: dict[Kind, Masks] = {
        kind: run.masks(kind, weights, *sizes[kind])
        for kind, weights in attention.items()
        if weights is not None
    }
    table, position_warnings = run.positions.encoding(
        src.ids if src else None, tgt.ids if tgt else None
    )
    told = [*(src.warnings if src else ()), *(tgt.warnings if tgt else ()), *warnings]
    told += [*position_warnings, *(w for m in masks.values() for w in m.warnings)]
    if table is not None and table.shape[1] != run.info.d_model:
        told.append(
            f"positions are added in the model's {table.shape[1]}-wide embedding space, before "
            f"its projection to d_model {run.info.d_model}: positional_encoding is "
            f"{table.shape[0]} × {table.shape[1]}"
        )
    return Trace(
        model=run.info,
        src_tokens=src.tokens if src else (),
        tgt_tokens=tgt.tokens if tgt else (),
        encoder_self=attention.get("encoder_self"),
        decoder_self=attention.get("decoder_self"),
        cross=attention.get("cross"),
        encoder_self_mask=masks["encoder_self"].union if "encoder_self" in masks else None,
        decoder_self_mask=masks["decoder_self"].union if "decoder_self" in masks else None,
        cross_mask=masks["cross"].union if "cross" in masks else None,
        positional_encoding=table,
        tgt_logprobs=logprobs,
        warnings=tuple(told),
        positional_scheme=run.positions.scheme,
        src_shown=run.shown(src.tokens) if src else None,
        tgt_shown=run.shown(tgt.tokens) if tgt else None,
        layer_masks={k: m.layers for k, m in masks.items() if m.layers is not None} or None,
        src_segments=src.segments if src else None,
        scores=scores or None,
        summaries={k: v[0] for k, v in summarised.items()} or None,
        norms=norms[0],  # type: ignore[arg-type]
        norms_missing=norms[1],
    )


def _matches(kind: str, src: Encoded | None, tgt: Encoded | None) -> list[tuple[int, int]]:
    """The (query, key) pairs of the induction statistic: self-attention only."""
    if kind == "cross":
        return []
    tokens = (src if kind == "encoder_self" else tgt).ids  # type: ignore[union-attr]
    return [(q, j + 1) for q, j in earlier_matches(tokens)]


def _keys(kind: str, src: Encoded | None, tgt: Encoded | None) -> tuple[str, ...]:
    """The key tokens of one kind."""
    return (tgt if kind == "decoder_self" else src).tokens  # type: ignore[union-attr]


def _ends(kind: str, src: Encoded | None, tgt: Encoded | None) -> list[int]:
    """The key positions holding end tokens (the Heads page's "end" share)."""
    return [j for j, token in enumerate(_keys(kind, src, tgt)) if token in END_TOKENS]


def _token_types(run: Runner, src: Encoded) -> tuple[dict[str, torch.Tensor], list[str]]:
    """The token type ids of a sentence pair, when the model embeds more than one type."""
    if src.token_types is None or not any(src.token_types):
        return {}, []
    if max(src.token_types) >= run.token_types:
        return {}, [
            "the model has no segment embedding for a second text: its two texts are told "
            "apart by the separator tokens only"
        ]
    return {"token_type_ids": run.ids(src.token_types)}, []


def stacked(per_layer: Any, scores: bool) -> Any:
    """A kind's layers as recorded: the weights stacked, or (scores) the LayerScores."""
    if not scores:
        return stack_attention(per_layer)
    per_layer = [x.scores if isinstance(x, CapturedHeads) else x for x in per_layer]
    if not per_layer or not all(isinstance(x, LayerScores) for x in per_layer):
        raise UnexpressibleError(NOT_REGISTERED)
    return tuple(per_layer)


def forward(run: Runner, scores: bool, **inputs: Any) -> Any:
    """The model's output with its attention: the weights (eager), or (scores) what the
    kernel computed them from, with the norms of what its heads carry and write (taken in
    each call where the model hands its keywords down to it, else from the values and heads'
    outputs each call hands back)."""
    if not scores:
        return run.model(**inputs, output_attentions=True)
    model = kernel_twin(run.model, CAPTURE_HEADS)
    with contextlib.suppress(HeadsError, ValueError):  # the norms' own step says why not
        inputs[TAKE_NORMS] = InCall(model, run.info, run.factors)
    return model(**inputs, output_attentions=True)


def norms(run: Runner, scores: bool, attentions: dict[Kind, Any], inputs: dict[str, Any]) -> Norms:
    """The trace's norms: from what its own capture received (scores), else by a second pass
    of a private copy over the same inputs (weights: short inputs)."""
    captured = None
    if scores:
        if not all(isinstance(x, CapturedHeads) for got in attentions.values() for x in got):
            return None, "attnlens cannot take this model's values: " + NOT_REGISTERED
        captured = {kind: [x.heads for x in got] for kind, got in attentions.items()}
    return trace_norms(run.model, run.info, captured, inputs, run.factors)


@torch.inference_mode()
def encoder_trace(run: Runner, src: Encoded, scores: bool = False) -> Trace:
    """Encoder-only: TEXT (and a pair's second text) on the source side, self-attention."""
    input_ids = run.ids(src.ids)  # (1, S)
    mask = torch.ones_like(input_ids)  # (1, S): one unpadded sequence
    types, warnings = _token_types(run, src)
    inputs = {"input_ids": input_ids, "attention_mask": mask, **types}
    out = forward(run, scores, **inputs)
    recorded: Recorded = {"encoder_self": stacked(out.attentions, scores)}
    taken = norms(run, scores, {"encoder_self": out.attentions}, inputs)
    del out  # its hidden states: gone before the summaries are computed
    return _record(run, src, None, recorded, None, warnings, taken)


@torch.inference_mode()
def decoder_trace(run: Runner, tgt: Encoded, eos: int | None, scores: bool = False) -> Trace:
    """Decoder-only: TEXT on the decoder side, causal self-attention, next-token log-probs."""
    input_ids = run.ids(tgt.ids)  # (1, T)
    mask = torch.ones_like(input_ids)  # (1, T)
    # no key/value cache: nothing decodes after a trace (Llama-3.2-1B × 2,048: 134 MB)
    inputs = {"input_ids": input_ids, "attention_mask": mask, "use_cache": False}
    out = forward(run, scores, **inputs)
    warnings, logprobs = [], None
    if eos is None:
        warnings.append("the model names no end token: tgt_logprobs not computed")
    else:
        logprobs = next_token_logprobs(out.logits, (*tgt.ids[1:], eos))  # (T,)
    recorded: Recorded = {"decoder_self": stacked(out.attentions, scores)}
    taken = norms(run, scores, {"decoder_self": out.attentions}, inputs)
    del out  # its logits (T × V) are read: gone before the summaries are computed
    return _record(run, None, tgt, recorded, logprobs, warnings, taken)


@torch.inference_mode()
def seq2seq_trace(
    run: Runner, src: Encoded, dec: Encoded, next_ids: tuple[int, ...], scores: bool = False
) -> Trace:
    """Encoder-decoder, teacher-forced: dec holds the decoder inputs (start token first)."""
    input_ids, decoder_ids = run.ids(src.ids), run.ids(dec.ids)  # (1, S), (1, T)
    inputs = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids),
              "decoder_input_ids": decoder_ids, "use_cache": False}  # fmt: skip
    out = forward(run, scores, **inputs)
    recorded: Recorded = {
        "encoder_self": stacked(out.encoder_attentions, scores),  # (L, H, S, S)
        "decoder_self": stacked(out.decoder_attentions, scores),  # (L', H', T, T)
        "cross": stacked(out.cross_attentions, scores),  # (L', H', T, S)
    }
    logprobs = next_token_logprobs(out.logits, next_ids)  # (T,)
    kinds = {"encoder_self": out.encoder_attentions, "decoder_self": out.decoder_attentions,
             "cross": out.cross_attentions}  # fmt: skip
    taken = norms(run, scores, kinds, inputs)  # type: ignore[arg-type]
    del out, kinds  # its logits (T × V) and encoder output are read: gone before the summaries
    return _record(run, src, dec, recorded, logprobs, [], taken)


def runner_for(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    architecture: Architecture,
    info: ModelInfo,
    device: torch.device,
) -> Runner:
    """The Runner of a loaded model: its positions, its layers' mask rules (a single stack's;
    no encoder-decoder in transformers' eager attention restricts its layers), its tokens'
    form and whether it embeds token types."""
    config = model.config
    rules = StackRules()
    if architecture != "encoder-decoder":
        rules = stack_rules(config, info.n_layers)
    takes_types = "token_type_ids" in inspect.signature(model.forward).parameters
    types = getattr(config.get_text_config(), "type_vocab_size", 0) if takes_types else 0
    return Runner(
        model, info, Positions.of(model, config), device, rules, is_byte_level(tokenizer),
        int(types or 0),
    )  # fmt: skip
