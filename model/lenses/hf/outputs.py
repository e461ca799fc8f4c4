"""A Trace from attention someone already computed: a Hugging Face output's `attentions`,
`encoder_attentions`, `decoder_attentions` and `cross_attentions` (`attnlens.from_hf`).

What BertViz's `head_view(outputs.attentions, tokens)` takes, so every attnlens figure draws it.
Tensors are read by duck typing (`detach`, `cpu`, `float`, `numpy`), so this module imports
neither torch nor transformers: PyTorch tensors, NumPy arrays and anything `numpy.asarray`
reads all work. Shapes are checked against the tokens, and the weights against what softmax
gives (rows summing to 1; nothing above the diagonal of causal self-attention).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from attnlens.model.lenses.hf.tokens import display_tokens
from attnlens.record.errors import InputError
from attnlens.record.trace import Architecture, ModelInfo, Trace

DEFAULT_NAME = "Hugging Face outputs"
DEFAULT_TOLERANCE = 1e-3  # how far from 1 a row of softmax weights may sum
HALF_TOLERANCE = 1e-2  # ... when computed in float16 or bfloat16
ASK_FOR_ATTENTION = (
    "run the model with output_attentions=True (load it with attn_implementation='eager': "
    "other implementations return no weights)"
)


def _shape(x: object) -> tuple[int, ...]:
    """The shape of a tensor or an array, or of what numpy makes of anything else."""
    shape = getattr(x, "shape", None)
    return tuple(int(n) for n in (shape if shape is not None else np.asarray(x).shape))


def as_numpy(x: object) -> np.ndarray:
    """float32 array of a PyTorch tensor (on any device, with or without grad, any float
    type), a NumPy array or anything array-like."""
    for method in ("detach", "cpu", "float"):  # torch; float() also reads bfloat16
        convert = getattr(x, method, None)
        if callable(convert) and not isinstance(x, np.ndarray):
            x = convert()
    to_numpy = getattr(x, "numpy", None)
    if callable(to_numpy) and not isinstance(x, np.ndarray):
        x = to_numpy()
    return np.asarray(x, dtype=np.float32)


def _layers(per_layer: object, what: str, index: int | None) -> tuple[np.ndarray, int]:
    """(L, H, Q, K) from L tensors of shape (batch, H, Q, K), the batch row picked by index."""
    layers = list(per_layer)  # type: ignore[call-overload]
    shapes = [_shape(layer) for layer in layers]
    for i, shape in enumerate(shapes):
        if len(shape) != 4:
            raise InputError(
                f"{what} of layer {i} has shape {shape}; Hugging Face returns 4 dimensions "
                "per layer: (batch, heads, queries, keys)"
            )
        if shape != shapes[0]:
            raise InputError(f"{what}: layer {i} has shape {shape} but layer 0 has {shapes[0]}")
    batch = shapes[0][0]
    if index is None and batch != 1:
        raise InputError(
            f"the outputs hold a batch of {batch} sequences; pass index= (0-{batch - 1}) to "
            "pick one, and its attention_mask to drop its padding"
        )
    row = 0 if index is None else index
    if not 0 <= row < batch:
        raise InputError(f"index {row} is outside the batch of {batch} (0-{batch - 1})")
    return np.stack([as_numpy(layer[row]) for layer in layers]), row  # type: ignore[index]


def _kept(mask: object, row: int, positions: int, what: str) -> np.ndarray:
    """(positions,) bool: the positions an attention mask keeps (all when there is none)."""
    if mask is None:
        return np.ones(positions, dtype=bool)
    values = as_numpy(mask)
    values = values[row] if values.ndim == 2 else values
    if values.shape != (positions,):
        raise InputError(
            f"{what} has shape {values.shape} but the attention covers {positions} positions"
        )
    return values > 0


def _tokens(tokens: object, kept: np.ndarray, what: str, where: str) -> tuple[str, ...]:
    """One token string per kept position; tokens may also list the dropped padding."""
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise InputError(
            f"{what} must be a list of token strings, one per position "
            "(tokenizer.convert_ids_to_tokens(ids))"
        )
    if not all(isinstance(t, str) for t in tokens):
        raise InputError(f"{what} must be strings: use tokenizer.convert_ids_to_tokens(ids)")
    positions, count = kept.size, int(kept.sum())
    if len(tokens) == positions:
        return tuple(t for t, k in zip(tokens, kept, strict=True) if k)
    if len(tokens) == count:
        return tuple(tokens)
    padding = f" ({count} without padding)" if count != positions else ""
    raise InputError(
        f"{where} covers {positions} positions{padding} but {len(tokens)} {what} were given"
    )


@dataclass(frozen=True)
class Side:
    """One side of the model (source or decoder): its tokens and the positions kept."""

    tokens: tuple[str, ...]
    kept: np.ndarray  # (positions,) bool

    @property
    def dropped(self) -> int:
        return int(self.kept.size - self.kept.sum())


def _square(weights: np.ndarray, side: Side) -> np.ndarray:
    return weights[:, :, side.kept][:, :, :, side.kept]  # (L, H, kept, kept)


def _check_rows(weights: np.ndarray, what: str, tolerance: float) -> None:
    """Every query's weights sum to 1, as softmax gives them."""
    sums = weights.astype(np.float64).sum(-1)  # (L, H, Q)
    bad = np.argwhere(np.abs(sums - 1.0) > tolerance)
    if bad.size:
        layer, head, query = (int(i) for i in bad[0])
        raise InputError(
            f"{what}: the weights of layer {layer}, head {head}, query {query} sum to "
            f"{sums[layer, head, query]:.4f}, not 1; pass attention weights after softmax from a "
            "model in eval mode (model.eval(): dropout rescales them), and the attention_mask "
            "when the sequence is padded"
        )


def _is_causal(weights: np.ndarray) -> bool:
    T = weights.shape[-1]
    return bool(T > 1 and not np.triu(weights, k=1).any())


def _check_causal(weights: np.ndarray) -> None:
    if np.triu(weights, k=1).any():
        layer, head, query, key = (int(i) for i in np.argwhere(np.triu(weights, k=1))[0])
        raise InputError(
            f"decoder self-attention of layer {layer}, head {head} puts weight on key {key} "
            f"after query {query}: not causal attention; pass architecture='encoder'"
        )


def _get(outputs: object, key: str) -> object | None:
    """One field of a ModelOutput (or dict); None when absent or empty."""
    value: object = (
        outputs.get(key) if isinstance(outputs, Mapping) else getattr(outputs, key, None)
    )
    if value is None or (isinstance(value, tuple | list) and not value):
        return None
    return value


def _d_model(outputs: object, given: int | None) -> int:
    """The width of the hidden states, when the outputs carry them (0 when unknown)."""
    if given is not None:
        return given
    if isinstance(outputs, Mapping) or hasattr(outputs, "attentions"):
        for key in ("last_hidden_state", "encoder_last_hidden_state"):
            value = _get(outputs, key)
            if value is not None:
                return _shape(value)[-1]
        hidden = _get(outputs, "hidden_states") or _get(outputs, "encoder_hidden_states")
        if hidden is not None:
            return _shape(list(hidden)[-1])[-1]  # type: ignore[call-overload]
    return 0


def _shown(tokens: tuple[str, ...]) -> tuple[str, ...] | None:
    readable = tuple(display_tokens(tokens))
    return readable if readable != tokens else None


def _dropped_warning(*sides: Side) -> tuple[str, ...]:
    dropped = sum(side.dropped for side in sides)
    if not dropped:
        return ()
    return (f"{dropped} padding positions dropped (attention_mask)",)


def from_hf(
    outputs: object,
    tokens: Sequence[str],
    tgt_tokens: Sequence[str] | None = None,
    *,
    index: int | None = None,
    attention_mask: object = None,
    decoder_attention_mask: object = None,
    architecture: Architecture | None = None,
    name: str = DEFAULT_NAME,
    d_model: int | None = None,
) -> Trace:
    """A Trace from a Hugging Face model's outputs (run with output_attentions=True), or from
    its `attentions` alone, one tensor (batch, heads, queries, keys) per layer.

    tokens: one string per position (special tokens included): the text of an encoder or a
    decoder-only model, the source of an encoder-decoder, whose decoder inputs are tgt_tokens.
    index picks one sequence of a batch; attention_mask (and decoder_attention_mask) drop its
    padding. architecture ("encoder" or "decoder") is read off the weights when not given:
    self-attention with nothing above the diagonal is causal.
    """
    encoder, decoder = _get(outputs, "encoder_attentions"), _get(outputs, "decoder_attentions")
    if encoder is not None or decoder is not None:
        if architecture not in (None, "encoder-decoder"):
            raise InputError(f"these are an encoder-decoder's outputs, not an {architecture}'s")
        return _seq2seq(outputs, tokens, tgt_tokens, index, (attention_mask,
                        decoder_attention_mask), name, d_model)  # fmt: skip
    if architecture == "encoder-decoder":
        raise InputError("an encoder-decoder's outputs hold encoder_attentions: none found here")
    if isinstance(outputs, Mapping) or hasattr(outputs, "attentions"):
        only = _get(outputs, "attentions")
        if only is None:
            raise InputError(f"these outputs hold no attention weights: {ASK_FOR_ATTENTION}")
    elif isinstance(outputs, Sequence) and outputs and not isinstance(outputs, str):
        only = outputs
    else:
        raise InputError(
            f"from_hf takes a model's outputs or their attentions (one tensor per layer), not a "
            f"{type(outputs).__name__}; {ASK_FOR_ATTENTION}"
        )
    causal_output = "CausalLM" in type(outputs).__name__
    return _single(
        only, tokens, index, attention_mask, architecture, causal_output, name,
        _d_model(outputs, d_model),
    )  # fmt: skip


def _single(
    per_layer: object,
    tokens: Sequence[str],
    index: int | None,
    attention_mask: object,
    architecture: Architecture | None,
    causal_output: bool,
    name: str,
    d_model: int,
) -> Trace:
    """Encoder-only or decoder-only: one stack of self-attention."""
    raw, row = _layers(per_layer, "attention", index)  # (L, H, N, N)
    N = raw.shape[-1]
    if raw.shape[-2] != N:
        raise InputError(f"self-attention must be square, got {raw.shape[-2]} queries × {N} keys")
    kept = _kept(attention_mask, row, N, "attention_mask")
    side = Side(_tokens(tokens, kept, "tokens", "the attention"), kept)
    weights = _square(raw, side)  # (L, H, n, n)
    arch = architecture or ("decoder" if causal_output or _is_causal(weights) else "encoder")
    if arch not in ("encoder", "decoder"):
        raise InputError(f"architecture must be 'encoder' or 'decoder', got {arch!r}")
    tolerance = _tolerance(per_layer)
    _check_rows(weights, "attention", tolerance)
    L, H, n, _ = weights.shape
    info = ModelInfo(name, arch, L, H, d_model)
    text, allowed = side.tokens, np.ones((n, n), dtype=bool)
    if arch == "decoder":
        _check_causal(weights)
        allowed = np.tril(allowed)
    encoder = arch == "encoder"
    return Trace(
        model=info,
        src_tokens=text if encoder else (),
        tgt_tokens=() if encoder else text,
        encoder_self=weights if encoder else None,
        decoder_self=None if encoder else weights,
        cross=None,
        encoder_self_mask=allowed if encoder else None,
        decoder_self_mask=None if encoder else allowed,
        cross_mask=None,
        positional_encoding=None,
        tgt_logprobs=None,
        warnings=_dropped_warning(side),
        src_shown=_shown(text) if encoder else None,
        tgt_shown=None if encoder else _shown(text),
    )


def _seq2seq(
    outputs: object,
    tokens: Sequence[str],
    tgt_tokens: Sequence[str] | None,
    index: int | None,
    masks: tuple[object, object],
    name: str,
    d_model: int | None,
) -> Trace:
    """Encoder-decoder: encoder self-, decoder self- and cross-attention."""
    if tgt_tokens is None:
        raise InputError(
            "an encoder-decoder's outputs need tgt_tokens too: the decoder's input tokens "
            "(tokenizer.convert_ids_to_tokens(decoder_input_ids[0]))"
        )
    found = {k: _get(outputs, f"{k}_attentions") for k in ("encoder", "decoder", "cross")}
    missing = [k for k, v in found.items() if v is None]
    if missing:
        absent = " or ".join(missing)
        raise InputError(f"the outputs hold no {absent} attention: {ASK_FOR_ATTENTION}")
    enc, row = _layers(found["encoder"], "encoder attention", index)  # (L, H, S, S)
    dec, _ = _layers(found["decoder"], "decoder attention", index)  # (L', H', T, T)
    cross, _ = _layers(found["cross"], "cross-attention", index)  # (L', H', T, S)
    S, T = enc.shape[-1], dec.shape[-1]
    if cross.shape[-2:] != (T, S):
        raise InputError(
            f"cross-attention has {cross.shape[-2]} queries × {cross.shape[-1]} keys but the "
            f"decoder attention covers {T} positions and the encoder attention {S}"
        )
    src_kept = _kept(masks[0], row, S, "attention_mask")
    tgt_kept = _kept(masks[1], row, T, "decoder_attention_mask")
    src = Side(_tokens(tokens, src_kept, "tokens", "the encoder attention"), src_kept)
    tgt = Side(_tokens(tgt_tokens, tgt_kept, "tgt_tokens", "the decoder attention"), tgt_kept)
    enc, dec = _square(enc, src), _square(dec, tgt)
    cross = cross[:, :, tgt.kept][:, :, :, src.kept]  # (L', H', t, s)
    tolerance = _tolerance(found["encoder"])
    for what, weights in (("encoder attention", enc), ("decoder attention", dec),
                          ("cross-attention", cross)):  # fmt: skip
        _check_rows(weights, what, tolerance)
    _check_causal(dec)
    (L, H), (dec_L, dec_H) = enc.shape[:2], dec.shape[:2]
    info = ModelInfo(
        name, "encoder-decoder", L, H, _d_model(outputs, d_model),
        decoder_layers=dec_L if dec_L != L else None, decoder_heads=dec_H if dec_H != H else None,
    )  # fmt: skip
    s, t = len(src.tokens), len(tgt.tokens)
    return Trace(
        model=info,
        src_tokens=src.tokens,
        tgt_tokens=tgt.tokens,
        encoder_self=enc,
        decoder_self=dec,
        cross=cross,
        encoder_self_mask=np.ones((s, s), dtype=bool),
        decoder_self_mask=np.tril(np.ones((t, t), dtype=bool)),
        cross_mask=np.ones((t, s), dtype=bool),
        positional_encoding=None,
        tgt_logprobs=None,
        warnings=_dropped_warning(src, tgt),
        src_shown=_shown(src.tokens),
        tgt_shown=_shown(tgt.tokens),
    )


def _tolerance(per_layer: object) -> float:
    """How far from 1 a row may sum: further for weights computed in 16-bit floats."""
    first = next(iter(per_layer), None)  # type: ignore[call-overload]
    name = str(getattr(first, "dtype", "")).replace("torch.", "")
    return HALF_TOLERANCE if name in ("float16", "bfloat16", "half") else DEFAULT_TOLERANCE
