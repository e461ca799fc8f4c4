"""Training the decoder-only character language model `lm` with the recipe of §5."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from tqdm import tqdm

from model import checkpoint
from model.batch import pad_rows
from model.config import TransformerConfig
from model.corpus import CHARS, MAX_CHARS, load_corpus
from model.decoder_only import DecoderOnlyTransformer
from model.device import pick_device
from model.masks import target_mask
from model.tokenizer import CharTokenizer
from model.train import TrainConfig, paper_optimizer, snapshot_steps

DESCRIPTION = (
    "A character language model (decoder only) trained on Python's own help text; watch "
    "causal masks, previous-character heads, and temperature, top-k and top-p at work."
)


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
    net: DecoderOnlyTransformer, tok: CharTokenizer, texts: Sequence[str], train: Sequence[str]
) -> Perplexity:
    """exp(mean negative log-likelihood per predicted character), and the unigram baseline."""
    was_training = net.training
    net.eval()
    device = next(net.parameters()).device
    nll, count = 0.0, 0
    for i in range(0, len(texts), 64):
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


def train_lm(
    model_config: TransformerConfig,
    config: TrainConfig,
    out: Path,
    device: str = "auto",
    progress: bool = True,
) -> dict[str, Any]:
    """Train on the corpus's training sentences, save to out, return held-out perplexities."""
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    dev = pick_device(device)
    tok, corpus = CharTokenizer(CHARS), load_corpus()
    net = DecoderOnlyTransformer(model_config).to(dev)
    optimizer, schedule = paper_optimizer(net, model_config.d_model, config)
    keep = set(snapshot_steps(config.steps, config.snapshots))
    losses: list[float] = []
    shown: dict[str, float] = {}
    bar = tqdm(range(1, config.steps + 1), desc="train lm", disable=not progress)
    for step in bar:
        inputs, targets = sentence_batch(tok, rng.choices(corpus.train, k=config.batch_size), dev)
        logprobs = net(inputs, target_mask(inputs, tok.pad_id))  # (B, T, V)
        loss = F.cross_entropy(logprobs.transpose(1, 2), targets, ignore_index=tok.pad_id,
                               label_smoothing=config.label_smoothing)  # fmt: skip
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(float(loss.detach()))
        shown["loss"] = losses[-1]
        if step % config.eval_every == 0:
            shown["ppl"] = perplexity(net, tok, corpus.held_out, corpus.train).model
        bar.set_postfix({k: f"{v:.3f}" for k, v in shown.items()}, refresh=False)
        if step in keep:
            meta = {"step": step, "architecture": "decoder"}
            checkpoint.save(out / "snapshots" / f"step-{step:06d}", net, tok, meta, half=True)
    final = perplexity(net, tok, corpus.held_out, corpus.train)
    metrics = {
        "held_out_sentences": len(corpus.held_out), "perplexity": final.model,
        "unigram_perplexity": final.unigram, "final_loss": losses[-1],
    }  # fmt: skip
    meta = {
        "name": "lm", "task": "lm", "description": DESCRIPTION, "architecture": "decoder",
        "max_source_len": MAX_CHARS, "training": asdict(config), "metrics": metrics,
        "loss_curve": losses[:: max(1, len(losses) // 200)],
    }  # fmt: skip
    checkpoint.save(out, net, tok, meta)
    return metrics


def lm_model_config() -> TransformerConfig:
    """3 layers, d_model 64, 4 heads, room for a 120-character sentence and its two markers."""
    vocab = len(CharTokenizer(CHARS))
    return TransformerConfig(vocab, vocab, N=3, d_model=64, d_ff=256, h=4, dropout=0.1, max_len=128)


# No label smoothing: the lm's probabilities are shown (temperature, top-k, top-p), so they
# should be the model's own, and its perplexity an honest one.
LM_TRAIN = TrainConfig(steps=4000, batch_size=32, warmup=400, label_smoothing=0.0, eval_every=500)
