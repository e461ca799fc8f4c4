"""How well the decoder-only character language model `lm` predicts held-out sentences."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from attnlens.model.net.decoder_only import DecoderOnlyTransformer
from attnlens.model.net.masks import target_mask
from attnlens.model.net.tokenizer import CharTokenizer
from attnlens.model.progress import bar
from attnlens.model.training.batch import pad_rows


@dataclass(frozen=True)
class Perplexity:
    """Per-character perplexity of held-out sentences, the end token included."""

    model: float
    unigram: float  # a model that knows only how often each character occurs in training


def sentence_batch(
    tok: CharTokenizer, texts: Sequence[str], device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs <s> + text and next tokens text + </s>, padded: (B, T) each."""
    ids = [tok.encode(t).ids for t in texts]
    inputs = pad_rows([[tok.bos_id, *i] for i in ids], tok.pad_id).to(device)
    targets = pad_rows([[*i, tok.eos_id] for i in ids], tok.pad_id).to(device)
    return inputs, targets


@torch.inference_mode()
def perplexity(
    net: DecoderOnlyTransformer,
    tok: CharTokenizer,
    texts: Sequence[str],
    train: Sequence[str],
    progress: bool = False,
) -> Perplexity:
    """exp(mean negative log-likelihood per predicted character), and the unigram baseline."""
    was_training = net.training
    net.eval()
    device = next(net.parameters()).device
    nll, count = 0.0, 0
    starts = range(0, len(texts), 64)
    for i in bar(starts, desc="perplexity", enabled=progress, unit="batch"):
        inputs, targets = sentence_batch(tok, texts[i : i + 64], device)
        logprobs = net(inputs, target_mask(inputs, tok.pad_id))  # (B, T, V)
        nll += float(
            F.nll_loss(logprobs.transpose(1, 2), targets, ignore_index=tok.pad_id, reduction="sum")
        )
        count += int((targets != tok.pad_id).sum())
    net.train(was_training)
    return Perplexity(math.exp(nll / count), unigram_perplexity(tok, texts, train))


def unigram_perplexity(tok: CharTokenizer, texts: Sequence[str], train: Sequence[str]) -> float:
    """Perplexity of character frequencies from train (add-one smoothed), end token included."""
    counts = Counter(i for t in train for i in [*tok.encode(t).ids, tok.eos_id])
    total, vocab = sum(counts.values()), len(tok)
    nll, n = 0.0, 0
    for t in texts:
        for i in [*tok.encode(t).ids, tok.eos_id]:
            nll -= math.log((counts[i] + 1) / (total + vocab))
            n += 1
    return math.exp(nll / n)


@torch.inference_mode()
def character_losses(
    net: DecoderOnlyTransformer, tok: CharTokenizer, texts: Sequence[str]
) -> np.ndarray:
    """Each character's negative log-likelihood given the ones before it: (B, max len) numpy,
    NaN past a text's end (the end token is not counted)."""
    was_training = net.training
    net.eval()
    device = next(net.parameters()).device
    inputs, targets = sentence_batch(tok, texts, device)
    logprobs = net(inputs, target_mask(inputs, tok.pad_id))  # (B, T, V)
    nll = -logprobs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = torch.tensor([[i < len(t) for i in range(nll.size(1))] for t in texts], device=device)
    net.train(was_training)
    out: np.ndarray = torch.where(real, nll, torch.nan).cpu().numpy()
    return out
