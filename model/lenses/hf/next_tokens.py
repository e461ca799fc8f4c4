"""A Hugging Face decoder-only model's likeliest next tokens at each position of its prompt."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from attnlens.model.lenses.hf.capture import UnexpressibleError
from attnlens.model.lenses.hf.encoding import encode_prompt
from attnlens.model.lenses.hf.twin import kernel_twin
from attnlens.model.lenses.next_tokens import check_logits_budget, check_top, top_next
from attnlens.record.next_tokens import NextTokens


@torch.inference_mode()
def prompt_next_tokens(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    text: str,
    k: int,
    limit: int,
    name: str,
    names: Sequence[str],
) -> NextTokens:
    """One forward pass over the prompt `trace` reads (its start token, then TEXT); the softmax
    of the model's own logits at each position, its k likeliest tokens kept."""
    k = check_top(k)
    prompt = encode_prompt(tokenizer, text, None, limit, name)
    check_logits_budget(len(prompt.ids), len(names))
    ids = torch.tensor([prompt.ids], dtype=torch.long, device=model.device)  # (1, T)
    with contextlib.suppress(UnexpressibleError):  # no weights wanted: the fused kernel, not
        model = kernel_twin(model, "sdpa")  # the eager one's every head's T × T
    out = model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    return top_next(out.logits[0], k, prompt.tokens, names)  # logits (T, V)
