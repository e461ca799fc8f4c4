"""Exact-match accuracy and per-head alignment accuracy on held-out examples; the reports of
`attnlens eval` (a task model's, and the language model's perplexity)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from attnlens.model.net.decoder_only import DecoderOnlyTransformer
from attnlens.model.net.masks import padding_mask
from attnlens.model.net.tokenizer import CharTokenizer, Tokenizer
from attnlens.model.net.transformer import HeadMask, Transformer
from attnlens.model.progress import bar
from attnlens.model.training.batch import make_batch, pad_rows, source_ids
from attnlens.model.training.corpus import load_corpus
from attnlens.model.training.lm import perplexity
from attnlens.model.training.tasks.base import Example, Task
from attnlens.record.errors import InputError


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
    net: Transformer,
    tok: Tokenizer,
    sources: Sequence[str],
    max_new: int,
    head_mask: HeadMask | None = None,
    banned: Sequence[int] = (),
) -> list[str]:
    """Greedy outputs for many sources at once, with the key/value cache; head_mask ablates
    heads, banned ids are never chosen."""
    device = next(net.parameters()).device
    src = pad_rows([source_ids(tok, s) for s in sources], tok.pad_id).to(device)
    src_mask = padding_mask(src, tok.pad_id)
    memory_kv = net.memory_kv(net.encode(src, src_mask, head_mask).memory)
    ban = torch.tensor(list(banned), dtype=torch.long, device=device)
    ys = torch.full((len(sources), 1), tok.bos_id, dtype=torch.long, device=device)  # (B, 1)
    cache, step_in = None, ys
    done = torch.zeros(len(sources), dtype=torch.bool, device=device)
    for _ in range(max_new):
        full_mask = torch.ones(len(sources), 1, ys.size(1), dtype=torch.bool, device=device)
        out = net.decode(memory_kv, src_mask, step_in, full_mask, cache, head_mask)
        cache = out.cache
        scores = net.log_probs(out.hidden[:, -1]).index_fill(-1, ban, float("-inf"))  # (B, V)
        nxt = scores.argmax(-1)  # (B,)
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
    net: Transformer,
    tok: Tokenizer,
    examples: Sequence[Example],
    batch_size: int = 256,
    progress: bool = False,
) -> Evaluation:
    """Greedy exact match and per-head alignment over examples."""
    was_training = net.training
    net.eval()
    correct, total = 0, 0
    hits = np.zeros((net.config.N, net.config.h))
    shown = bar(total=len(examples), desc="evaluate", enabled=progress, unit="example")
    for i in range(0, len(examples), batch_size):
        chunk = examples[i : i + batch_size]
        max_new = max(tok.count(e.target) for e in chunk) + 2
        outputs = greedy_batch(net, tok, [e.source for e in chunk], max_new)
        correct += sum(o == e.target for o, e in zip(outputs, chunk, strict=False))
        chunk_hits, chunk_total = alignment_hits(net, tok, chunk)
        hits, total = hits + chunk_hits, total + chunk_total
        shown.update(len(chunk))
    shown.close()
    net.train(was_training)
    table = hits / max(total, 1)
    best = np.unravel_index(int(np.argmax(table)), table.shape)
    return Evaluation(len(examples), correct / len(examples), table, (int(best[0]), int(best[1])))


@dataclass(frozen=True)
class TaskReport:
    """What `attnlens eval` measured on a model of one of our tasks."""

    model: str
    task: str
    n: int
    seed: int
    exact: float
    head_alignment: list[list[float]]  # (N, h): share of target tokens aligned by each head
    best_head: tuple[int, int]  # (layer, head)
    best_head_alignment: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "best_head": list(self.best_head)}


@dataclass(frozen=True)
class PerplexityReport:
    """What `attnlens eval` measured on our language model."""

    model: str
    task: str
    n: int  # held-out sentences
    perplexity: float  # per character, the end token included
    unigram_perplexity: float  # character frequencies of the training sentences

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


Report = TaskReport | PerplexityReport


def evaluate_task(
    name: str, net: Transformer, tok: Tokenizer, task: Task, n: int, seed: int
) -> TaskReport:
    """A task model on n fresh examples of its task drawn from seed."""
    _check_n(n)
    result = evaluate(net, tok, task.examples(n, seed), progress=True)
    return TaskReport(
        name, task.name, result.n, seed, result.exact, result.head_alignment.round(4).tolist(),
        result.best_head, result.best_alignment,
    )  # fmt: skip


def evaluate_lm(name: str, net: DecoderOnlyTransformer, tok: Tokenizer, n: int) -> PerplexityReport:
    """The language model on (up to n of) its held-out sentences (a fixed split)."""
    _check_n(n)
    assert isinstance(tok, CharTokenizer), "our language model reads characters"
    corpus = load_corpus()
    held_out = corpus.held_out[:n]
    ppl = perplexity(net, tok, held_out, corpus.train, progress=True)
    return PerplexityReport(name, "lm", len(held_out), ppl.model, ppl.unigram)


def _check_n(n: int) -> None:
    if not isinstance(n, int) or n < 1:
        raise InputError(f"--n must be at least 1, got {n}")
