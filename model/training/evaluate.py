"""Exact-match accuracy and per-head alignment accuracy on held-out examples; the reports of
`attnlens eval` (a task model's, and the language model's perplexity)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from attnlens.model.decoding.heads import HeadRef
from attnlens.model.decoding.loop import greedy_ids
from attnlens.model.decoding.net_steppers import TransformerStepper
from attnlens.model.decoding.vocabulary import Vocabulary
from attnlens.model.net.decoder_only import DecoderOnlyTransformer
from attnlens.model.net.tokenizer import CharTokenizer, Tokenizer
from attnlens.model.net.transformer import Transformer
from attnlens.model.progress import bar
from attnlens.model.training.batch import make_batch, source_ids
from attnlens.model.training.corpus import MAX_CHARS, load_corpus
from attnlens.model.training.lm import perplexity
from attnlens.model.training.reports import (
    MAX_EXAMPLES,
    SUITES,
    KindPerplexity,
    KindScore,
    PerplexityReport,
    TaskReport,
)
from attnlens.model.training.tasks.base import Task
from attnlens.record.errors import InputError
from attnlens.record.example import Example


@dataclass(frozen=True)
class Evaluation:
    """Scores of a model on a set of examples."""

    n: int
    exact: float  # share of examples whose greedy output equals the target
    head_alignment: np.ndarray  # (N, h): share of target tokens whose argmax is the true source
    best_head: tuple[int, int]  # (layer, head) with the highest alignment accuracy
    tokens: int = 0  # target tokens the alignment was counted over

    @property
    def best_alignment(self) -> float:
        return float(self.head_alignment[self.best_head])


def greedy_batch(
    net: Transformer,
    tok: Tokenizer,
    sources: Sequence[str],
    max_new: int,
    ablate: Sequence[HeadRef] = (),
    banned: Sequence[int] = (),
) -> list[str]:
    """Greedy outputs for many sources at once: the one decoding loop (`greedy_ids`) on our
    stepper's key/value cache; ablate lists heads to zero, banned ids are never chosen."""
    stepper, prefix = TransformerStepper(net), [tok.bos_id]
    first = stepper.start_batch([source_ids(tok, s) for s in sources], prefix, ablate)
    vocab = Vocabulary(tok.vocab, tok.eos_id, lambda ids: tok.decode(list(ids)), tuple(banned))
    return [vocab.detokenize(ids) for ids in greedy_ids(stepper, first, prefix, vocab, max_new)]


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
    return _scored(len(examples), correct, hits, total)


def _scored(n: int, correct: float, hits: np.ndarray, tokens: int) -> Evaluation:
    table = hits / max(tokens, 1)
    best = np.unravel_index(int(np.argmax(table)), table.shape)
    return Evaluation(n, correct / max(n, 1), table, (int(best[0]), int(best[1])), tokens)


def combined(parts: Sequence[Evaluation]) -> Evaluation:
    """The scores of several sets of examples taken as one (tokens weigh the alignment)."""
    hits = sum(p.head_alignment * p.tokens for p in parts)
    correct = sum(p.exact * p.n for p in parts)
    n, tokens = sum(p.n for p in parts), sum(p.tokens for p in parts)
    return _scored(n, correct, np.asarray(hits), tokens)


def evaluate_task(
    name: str,
    net: Transformer,
    tok: Tokenizer,
    task: Task,
    n: int,
    seed: int,
    suite: str = "held-out",
) -> TaskReport:
    """A task model on n fresh examples of its task drawn from seed, or on n examples of each
    kind of its hard suite (sources read as the model reads them: `Task.read`)."""
    _check(n, suite)
    if suite == "held-out":
        result = evaluate(net, tok, task.examples(n, seed), progress=True)
        return _task_report(name, task.name, seed, result, suite)
    scores = {
        kind: evaluate(net, tok, [replace(e, source=task.read(e.source).text) for e in examples])
        for kind, examples in task.hard_suite(n, seed).items()
    }
    kinds = tuple(
        KindScore(kind, r.n, r.exact, r.best_head, r.best_alignment) for kind, r in scores.items()
    )
    return _task_report(name, task.name, seed, combined(list(scores.values())), suite, kinds)


def _task_report(
    name: str,
    task: str,
    seed: int,
    result: Evaluation,
    suite: str,
    kinds: tuple[KindScore, ...] = (),
) -> TaskReport:
    return TaskReport(
        name, task, result.n, seed, result.exact, result.head_alignment.round(4).tolist(),
        result.best_head, result.best_alignment, suite, kinds,
    )  # fmt: skip


def evaluate_lm(
    name: str, net: DecoderOnlyTransformer, tok: Tokenizer, n: int, suite: str = "held-out"
) -> PerplexityReport:
    """The language model on (up to n of) its held-out sentences (a fixed split), or on each
    kind of its hard suite (`lm_hard_suite`)."""
    _check(n, suite)
    assert isinstance(tok, CharTokenizer), "our language model reads characters"
    corpus = load_corpus()
    if suite == "held-out":
        held_out = corpus.held_out[:n]
        ppl = perplexity(net, tok, held_out, corpus.train, progress=True)
        return PerplexityReport(name, "lm", len(held_out), ppl.model, ppl.unigram, suite)
    kinds, suite_texts = [], lm_hard_suite(corpus.held_out, n)
    for kind, texts in suite_texts.items():
        ppl = perplexity(net, tok, texts, corpus.train, progress=True)
        kinds.append(KindPerplexity(kind, len(texts), ppl.model, ppl.unigram))
    every = [t for texts in suite_texts.values() for t in texts]
    ppl = perplexity(net, tok, every, corpus.train, progress=True)
    return PerplexityReport(name, "lm", len(every), ppl.model, ppl.unigram, suite, tuple(kinds))


def lm_hard_suite(held_out: Sequence[str], n: int) -> dict[str, list[str]]:
    """Up to n held-out sentences of each kind: in capitals, in small letters, the shortest and
    the longest quarter, and a short sentence typed twice (the second copy can be copied)."""
    by_length = sorted(held_out, key=len)
    quarter = max(1, len(held_out) // 4)
    short = [s for s in held_out if 2 * len(s) + 1 <= MAX_CHARS]
    suite = {
        "upper case": [s.upper() for s in held_out],
        "lower case": [s.lower() for s in held_out],
        "shortest": by_length[:quarter],
        "longest": by_length[-quarter:],
        "repeats": [f"{s} {s}" for s in short],
    }
    return {kind: texts[:n] for kind, texts in suite.items()}


def _check(n: int, suite: str) -> None:
    if not isinstance(n, int) or n < 1:
        raise InputError(f"--n must be at least 1, got {n}")
    if n > MAX_EXAMPLES:
        raise InputError(f"--n must be at most {MAX_EXAMPLES} (examples per run or kind), got {n}")
    if suite not in SUITES:
        raise InputError(f"suite must be one of {', '.join(SUITES)}, got {suite!r}")
