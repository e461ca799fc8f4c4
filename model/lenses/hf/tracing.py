"""One teacher-forced forward pass per kind of model, recorded as a Trace from the model's own
output_attentions tensors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from transformers import PreTrainedModel

from attnlens.model.lenses.hf.inputs import Encoded
from attnlens.model.lenses.hf.mapping import (
    causal_mask,
    key_mask,
    next_token_logprobs,
    stack_attention,
)
from attnlens.model.lenses.hf.positions import Positions
from attnlens.record.trace import ModelInfo, Trace


@dataclass(frozen=True)
class Runner:
    """What a forward pass needs besides the tokens."""

    model: PreTrainedModel
    info: ModelInfo
    positions: Positions
    device: torch.device
    window: int | None = None  # sliding-window attention on every decoder layer
    window_on_some_layers: int | None = None  # ... on some layers only: the mask cannot say

    def decoder_mask(self, mask: torch.Tensor) -> tuple[np.ndarray, list[str]]:
        """The causal (T, T) mask as the decoder applied it, and a warning when one mask
        cannot describe every layer."""
        size, partial = int(mask.size(-1)), self.window_on_some_layers
        if partial is not None and size > partial:
            return causal_mask(mask), [
                f"some layers attend only to the last {partial} positions (sliding window); "
                "the decoder mask shows full causal attention"
            ]
        return causal_mask(mask, self.window), []

    def ids(self, ids: tuple[int, ...]) -> torch.Tensor:
        return torch.tensor([ids], dtype=torch.long, device=self.device)  # (1, N)


@torch.inference_mode()
def encoder_trace(run: Runner, src: Encoded) -> Trace:
    """Encoder-only: TEXT on the source side, self-attention only."""
    input_ids = run.ids(src.ids)  # (1, S)
    mask = torch.ones_like(input_ids)  # (1, S): one unpadded sequence
    out = run.model(input_ids=input_ids, attention_mask=mask, output_attentions=True)
    table, warnings = run.positions.encoding(len(src.ids))
    return Trace(
        model=run.info,
        src_tokens=src.tokens,
        tgt_tokens=(),
        encoder_self=stack_attention(out.attentions),  # (L, H, S, S)
        decoder_self=None,
        cross=None,
        encoder_self_mask=key_mask(mask, len(src.ids)),
        decoder_self_mask=None,
        cross_mask=None,
        positional_encoding=table,
        tgt_logprobs=None,
        warnings=(*src.warnings, *warnings),
    )


@torch.inference_mode()
def decoder_trace(run: Runner, tgt: Encoded, eos: int | None) -> Trace:
    """Decoder-only: TEXT on the decoder side, causal self-attention, next-token log-probs."""
    input_ids = run.ids(tgt.ids)  # (1, T)
    mask = torch.ones_like(input_ids)  # (1, T)
    out = run.model(input_ids=input_ids, attention_mask=mask, output_attentions=True)
    table, warnings = run.positions.encoding(len(tgt.ids))
    decoder_mask, mask_warnings = run.decoder_mask(mask)
    warnings += mask_warnings
    logprobs = None
    if eos is None:
        warnings.append("the model names no end token: tgt_logprobs not computed")
    else:
        logprobs = next_token_logprobs(out.logits, (*tgt.ids[1:], eos))  # (T,)
    return Trace(
        model=run.info,
        src_tokens=(),
        tgt_tokens=tgt.tokens,
        encoder_self=None,
        decoder_self=stack_attention(out.attentions),  # (L, H, T, T)
        cross=None,
        encoder_self_mask=None,
        decoder_self_mask=decoder_mask,
        cross_mask=None,
        positional_encoding=table,
        tgt_logprobs=logprobs,
        warnings=(*tgt.warnings, *warnings),
    )


@torch.inference_mode()
def seq2seq_trace(run: Runner, src: Encoded, dec: Encoded, next_ids: tuple[int, ...]) -> Trace:
    """Encoder-decoder, teacher-forced: dec holds the decoder inputs (start token first)."""
    input_ids, decoder_ids = run.ids(src.ids), run.ids(dec.ids)  # (1, S), (1, T)
    mask, dec_mask = torch.ones_like(input_ids), torch.ones_like(decoder_ids)
    out = run.model(
        input_ids=input_ids,
        attention_mask=mask,
        decoder_input_ids=decoder_ids,
        output_attentions=True,
        use_cache=False,
    )
    table, warnings = run.positions.encoding(max(len(src.ids), len(dec.ids)))
    decoder_mask, mask_warnings = run.decoder_mask(dec_mask)
    warnings += mask_warnings
    return Trace(
        model=run.info,
        src_tokens=src.tokens,
        tgt_tokens=dec.tokens,
        encoder_self=stack_attention(out.encoder_attentions),  # (L, H, S, S)
        decoder_self=stack_attention(out.decoder_attentions),  # (L, H, T, T)
        cross=stack_attention(out.cross_attentions),  # (L, H, T, S)
        encoder_self_mask=key_mask(mask, len(src.ids)),
        decoder_self_mask=decoder_mask,
        cross_mask=key_mask(mask, len(dec.ids)),
        positional_encoding=table,
        tgt_logprobs=next_token_logprobs(out.logits, next_ids),  # (T,)
        warnings=(*src.warnings, *dec.warnings, *warnings),
    )
