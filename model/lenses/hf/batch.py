"""Batches of token ids through a Hugging Face model for the head experiments: attention from
the model's own output_attentions, next-token log-probabilities from its logits, an encoder's
last hidden states. The model given is the shared one, or a private copy with heads ablated
(ablation.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from attnlens.model.lenses.token_runs import TokenBatch, TokenRun, TokenSpace
from attnlens.record.errors import InputError
from attnlens.record.trace import Architecture


def fingerprint(name: str, folder: Path | None, model: PreTrainedModel) -> str:
    """A model loaded from a folder: its weights and configs by name, size and modification
    time (hashing gigabytes on every run would cost more than the experiment). A model held
    in memory (attnlens.wrap), whose weights a notebook may change at any time: the weights
    themselves."""
    if folder is None or not folder.is_dir():
        digest = hashlib.sha256(f"in memory:{type(model).__name__}".encode())
        for key, tensor in model.state_dict().items():
            digest.update(key.encode())
            digest.update(tensor.detach().float().cpu().numpy().tobytes())
        return f"{name}@{digest.hexdigest()[:20]}"
    digest = hashlib.sha256(str(folder.resolve()).encode())
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.suffix in {".safetensors", ".json"}:
            stat = path.stat()
            digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return f"{name}@{digest.hexdigest()[:20]}"


def token_space(
    tokenizer: PreTrainedTokenizerBase,
    architecture: Architecture,
    names: Sequence[str],
    start: int | None,
) -> TokenSpace:
    """What the tokenizer puts around a text, ordinary ids, and the id erasure uses."""
    bare = list(tokenizer("a", add_special_tokens=False)["input_ids"])
    full = list(tokenizer("a", add_special_tokens=True)["input_ids"])
    at = next((i for i in range(len(full)) if full[i : i + len(bare)] == bare), 0)
    prefix, suffix = full[:at], full[at + len(bare) :]
    bos = tokenizer.bos_token_id
    if architecture == "decoder":  # as encode_prompt builds a decoder's prompt
        suffix = []
        if bos is not None and (not prefix or prefix[0] != bos):
            prefix = [bos, *prefix]
    special = set(tokenizer.all_special_ids)
    ordinary = tuple(i for i in range(len(names)) if i not in special)
    erase = next(
        (
            i
            for i in (tokenizer.unk_token_id, tokenizer.pad_token_id, tokenizer.eos_token_id)
            if isinstance(i, int)
        ),
        0,
    )
    return TokenSpace(tuple(prefix), tuple(suffix), ordinary, erase, tuple(names), start)


def _padded(
    rows: Sequence[Sequence[int]], vocab: int, limit: int, device: torch.device, what: str
) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    """(B, T) ids right-padded with 0, their attention mask, and lengths (B,)."""
    if not rows or any(len(r) == 0 for r in rows):
        raise InputError(f"{what}: give at least one sequence, none of them empty")
    lengths = np.array([len(r) for r in rows])
    if lengths.max() > limit:
        raise InputError(f"{what}: {lengths.max()} tokens, but the model takes at most {limit}")
    bad = [i for r in rows for i in r if not 0 <= int(i) < vocab]
    if bad:
        raise InputError(f"{what}: id {bad[0]} is outside the vocabulary (0-{vocab - 1})")
    ids = torch.zeros(len(rows), int(lengths.max()), dtype=torch.long)
    for b, r in enumerate(rows):
        ids[b, : len(r)] = torch.tensor([int(i) for i in r])
    mask = (torch.arange(ids.size(1))[None, :] < torch.tensor(lengths)[:, None]).long()
    return ids.to(device), mask.to(device), lengths


def _attention(
    per_layer: Sequence[torch.Tensor] | None, queries: np.ndarray, keys: np.ndarray | None = None
) -> np.ndarray | None:
    """(B, L, H, Q, K) float32; query rows past each sequence's length NaN, keys past it 0."""
    if not per_layer:
        return None
    out = torch.stack(list(per_layer), dim=1).float().cpu().numpy().copy()  # (B, L, H, Q, K)
    keys = queries if keys is None else keys
    for b, (q, k) in enumerate(zip(queries, keys, strict=True)):
        out[b, :, :, :, k:] = 0.0
        out[b, :, :, q:] = np.nan
    return out


def _hidden(states: torch.Tensor, lengths: np.ndarray) -> np.ndarray:
    """(B, T, d_model) float32, positions past each sequence's length NaN."""
    out = states.float().cpu().numpy().copy()  # (B, T, d_model)
    for b, n in enumerate(lengths):
        out[b, n:] = np.nan
    return out


@torch.inference_mode()
def last_hidden(
    model: PreTrainedModel, batch: TokenBatch, vocab: int, limit: int, device: torch.device
) -> torch.Tensor:
    """An encoder's last hidden states of the batch as the model gives them, (B, T, d_model):
    padded as run_tokens pads, the padding's rows kept (what a later layer reads)."""
    ids, mask, _ = _padded(batch.tokens, vocab, limit, device, "tokens")
    hidden: torch.Tensor = model(input_ids=ids, attention_mask=mask).last_hidden_state
    return hidden


@torch.inference_mode()
def run_tokens(
    model: PreTrainedModel,
    architecture: Architecture,
    batch: TokenBatch,
    vocab: int,
    limit: int,
    device: torch.device,
) -> TokenRun:
    """One forward pass over the batch, attention and log-probabilities returned by value."""
    if architecture == "encoder-decoder":
        if batch.source is None or len(batch.source) != len(batch.tokens):
            raise InputError("an encoder-decoder needs one source per sequence")
        src, src_mask, src_len = _padded(batch.source, vocab, limit, device, "source")
        tgt, tgt_mask, tgt_len = _padded(batch.tokens, vocab, limit, device, "tokens")
        out = model(
            input_ids=src,
            attention_mask=src_mask,
            decoder_input_ids=tgt,
            decoder_attention_mask=tgt_mask,
            output_attentions=True,
            use_cache=False,
        )
        encoder = _attention(out.encoder_attentions, src_len)
        decoder = _attention(out.decoder_attentions, tgt_len)
        cross = _attention(out.cross_attentions, tgt_len, src_len)
    else:
        if batch.source is not None:
            raise InputError(f"a {architecture}-only model takes one sequence, no source")
        tgt, tgt_mask, tgt_len = _padded(batch.tokens, vocab, limit, device, "tokens")
        out = model(input_ids=tgt, attention_mask=tgt_mask, output_attentions=True)
        encoder = _attention(out.attentions, tgt_len) if architecture == "encoder" else None
        decoder = _attention(out.attentions, tgt_len) if architecture == "decoder" else None
        cross = None
    if architecture == "encoder":
        return TokenRun(encoder, None, None, None, None, _hidden(out.last_hidden_state, tgt_len))
    logprobs = torch.log_softmax(out.logits.float(), dim=-1)  # (B, T, V)
    given = logprobs[:, :-1].gather(-1, tgt[:, 1:].unsqueeze(-1)).squeeze(-1).cpu().numpy()
    top = logprobs.argmax(-1).cpu().numpy()
    for b, n in enumerate(tgt_len):
        given[b, n - 1 :] = np.nan
        top[b, n:] = -1
    return TokenRun(encoder, decoder, cross, given, top)
