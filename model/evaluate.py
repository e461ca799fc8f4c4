"""Exact-match accuracy and per-head alignment accuracy on held-out examples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from model.batch import make_batch, pad_rows, source_ids
from model.masks import padding_mask
from model.tasks.base import Example
from model.tokenizer import Tokenizer
from model.transformer import Transformer


@dataclass(frozen=True)
class Evaluation:
    """Scores of a model on a set of examples."""

    n: int
    exact: float  # share of examples whose greedy output equals the target
    head_alignment: np.ndarray  # (N, h): share of target tokens whose argmax is the true source
    best_head: tuple[int, int]  # (layer, head) with the highest alignment accuracy

    @property
    def best_alignment(self) -> float:
        return float(self.head_alignment[self.best_head])


@torch.inference_mode()
def greedy_batch(
    net: Transformer, tok: Tokenizer, sources: Sequence[str], max_new: int
) -> list[str]:
    """Greedy outputs for many sources at once, with the key/value cache."""
    device = next(net.parameters()).device
    src = pad_rows([source_ids(tok, s) for s in sources], tok.pad_id).to(device)
    src_mask = padding_mask(src, tok.pad_id)
    memory_kv = net.memory_kv(net.encode(src, src_mask).memory)
    ys = torch.full((len(sources), 1), tok.bos_id, dtype=torch.long, device=device)  # (B, 1)
    cache, step_in = None, ys
    done = torch.zeros(len(sources), dtype=torch.bool, device=device)
    for _ in range(max_new):
        full_mask = torch.ones(len(sources), 1, ys.size(1), dtype=torch.bool, device=device)
        out = net.decode(memory_kv, src_mask, step_in, full_mask, cache)
        cache = out.cache
        nxt = net.log_probs(out.hidden[:, -1]).argmax(-1)  # (B,)
        nxt = torch.where(done, torch.full_like(nxt, tok.pad_id), nxt)
        ys = torch.cat([ys, nxt.unsqueeze(1)], dim=1)
        step_in = nxt.unsqueeze(1)
        done |= nxt == tok.eos_id
        if bool(done.all()):
            break
    return [tok.decode(row[1:].tolist()) for row in ys]


@torch.inference_mode()
def alignment_hits(
    net: Transformer, tok: Tokenizer, examples: Sequence[Example]
) -> tuple[np.ndarray, int]:
    """(N, h) count of target tokens whose cross-attention argmax is the true source, and
    the number of target tokens."""
    device = next(net.parameters()).device
    batch = make_batch(tok, [e.source for e in examples], [e.target for e in examples], device)
    encoded = net.encode(batch.src, batch.src_mask)
    decoded = net.decode(
        net.memory_kv(encoded.memory), batch.src_mask, batch.tgt_in, batch.tgt_mask
    )
    argmax = decoded.cross_attention.argmax(-1).cpu().numpy()  # (N, B, h, T)
    hits = np.zeros(argmax.shape[0:1] + argmax.shape[2:3])  # (N, h)
    total = 0
    for b, e in enumerate(examples):
        truth = np.asarray(e.alignment)  # decoder position t predicts target token t
        if truth.size == 0:
            continue
        hits += (argmax[:, b, :, : truth.size] == truth).sum(-1)
        total += truth.size
    return hits, total


def evaluate(
    net: Transformer, tok: Tokenizer, examples: Sequence[Example], batch_size: int = 256
) -> Evaluation:
    """Greedy exact match and per-head alignment over examples."""
    was_training = net.training
    net.eval()
    correct, total = 0, 0
    hits = np.zeros((net.config.N, net.config.h))
    for i in range(0, len(examples), batch_size):
        chunk = examples[i : i + batch_size]
        max_new = max(tok.count(e.target) for e in chunk) + 2
        outputs = greedy_batch(net, tok, [e.source for e in chunk], max_new)
        correct += sum(o == e.target for o, e in zip(outputs, chunk, strict=False))
        chunk_hits, chunk_total = alignment_hits(net, tok, chunk)
        hits, total = hits + chunk_hits, total + chunk_total
    net.train(was_training)
    table = hits / max(total, 1)
    best = np.unravel_index(int(np.argmax(table)), table.shape)
    return Evaluation(len(examples), correct / len(examples), table, (int(best[0]), int(best[1])))
