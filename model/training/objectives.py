"""What the one training loop needs per architecture: the network, a batch and its loss, and
the held-out measurements and description saved with the model."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.decoder_only import DecoderOnlyTransformer
from attnlens.model.net.masks import target_mask
from attnlens.model.net.tokenizer import CharTokenizer, Tokenizer
from attnlens.model.net.transformer import Transformer
from attnlens.model.training.batch import make_batch
from attnlens.model.training.config import TrainConfig
from attnlens.model.training.corpus import CHARS, MAX_CHARS, Corpus, load_corpus
from attnlens.model.training.evaluate import Evaluation, evaluate
from attnlens.model.training.lm import character_losses, perplexity, sentence_batch
from attnlens.model.training.repeats import (
    INDUCTION_CHARS,
    INDUCTION_EXAMPLE,
    repeated_blocks,
    repeated_text,
)
from attnlens.model.training.tasks.base import Task
from attnlens.record.example import Example

LM_DESCRIPTION = (
    "A character language model (decoder only) trained on Python's own help text; watch "
    "causal masks, previous-character heads, and temperature, top-k and top-p at work."
)
INDUCTION_DESCRIPTION = (
    "A 2-layer decoder-only model of random letters and digits in which spans repeat: type a "
    "block twice (k3x9mq2wz7k3x9mq2wz7) and watch a previous-token head in layer 0 and an "
    "induction head in layer 1 look back one after the earlier match."
)


class Objective(ABC):
    """One architecture's side of training: build, batch and loss, measure, describe."""

    name: str
    architecture: str
    tokenizer: Tokenizer

    @abstractmethod
    def build(self, config: TransformerConfig) -> nn.Module:
        """The untrained network (initialised from torch's seeded generator)."""

    def prepare(self, config: TrainConfig) -> None:  # noqa: B027  (optional hook)
        """Draw what measuring needs (held-out examples), before training starts."""

    @abstractmethod
    def loss(
        self, net: nn.Module, rng: random.Random, config: TrainConfig, device: torch.device
    ) -> torch.Tensor:
        """The label-smoothed cross-entropy (§5.4) of one freshly drawn batch."""

    @abstractmethod
    def measure(self, net: nn.Module) -> dict[str, Any]:
        """Held-out scores, shown during training and saved as the final metrics."""

    def shown(self, metrics: dict[str, Any]) -> dict[str, float]:
        """The scores worth a progress bar's room."""
        return {k: v for k, v in metrics.items() if isinstance(v, float)}

    def description(self) -> dict[str, Any]:
        """What the saved config.json says about the model besides its sizes and metrics."""
        return {"name": self.name, "architecture": self.architecture}


def cross_entropy(logprobs: torch.Tensor, targets: torch.Tensor, pad: int, eps: float) -> Any:
    """§5.4 label smoothing over (B, T, V) scores against (B, T) targets, padding ignored."""
    return F.cross_entropy(logprobs.transpose(1, 2), targets, ignore_index=pad, label_smoothing=eps)


class TaskObjective(Objective):
    """An encoder-decoder learning one of our tasks (source → target pairs)."""

    architecture = "encoder-decoder"

    def __init__(self, task: Task) -> None:
        self.task, self.name, self.tokenizer = task, task.name, task.tokenizer
        self.held_out: list[Example] = []

    def build(self, config: TransformerConfig) -> Transformer:
        return Transformer(config)

    def prepare(self, config: TrainConfig) -> None:
        self.held_out = self.task.examples(config.eval_examples, seed=10_000 + config.seed)

    def loss(
        self, net: nn.Module, rng: random.Random, config: TrainConfig, device: torch.device
    ) -> torch.Tensor:
        examples = [self.task.sample(rng) for _ in range(config.batch_size)]
        sources, targets = [e.source for e in examples], [e.target for e in examples]
        batch = make_batch(self.tokenizer, sources, targets, device)
        logprobs = net(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)  # (B, T, V)
        return cross_entropy(logprobs, batch.tgt_out, self.tokenizer.pad_id, config.label_smoothing)  # type: ignore[no-any-return]

    def measure(self, net: nn.Module) -> dict[str, Any]:
        assert isinstance(net, Transformer)
        result: Evaluation = evaluate(net, self.tokenizer, self.held_out)
        return {
            "held_out_examples": result.n,
            "exact": result.exact,
            "best_head": list(result.best_head),
            "best_head_alignment": result.best_alignment,
            "head_alignment": result.head_alignment.round(4).tolist(),
        }

    def shown(self, metrics: dict[str, Any]) -> dict[str, float]:
        return {"exact": metrics["exact"], "aligned": metrics["best_head_alignment"]}

    def description(self) -> dict[str, Any]:
        task = self.task
        return {
            "name": task.name, "task": task.name, "description": task.description,
            "architecture": self.architecture, "max_source_len": task.max_source_len,
        }  # fmt: skip


class LanguageObjective(Objective):
    """A decoder-only character model of the sentences of Python's help text."""

    name = "lm"
    architecture = "decoder"

    def __init__(self) -> None:
        self.tokenizer = CharTokenizer(CHARS)
        self.corpus: Corpus = load_corpus()

    def build(self, config: TransformerConfig) -> DecoderOnlyTransformer:
        return DecoderOnlyTransformer(config)

    def loss(
        self, net: nn.Module, rng: random.Random, config: TrainConfig, device: torch.device
    ) -> torch.Tensor:
        texts = rng.choices(self.corpus.train, k=config.batch_size)
        inputs, targets = sentence_batch(self.tokenizer, texts, device)  # type: ignore[arg-type]
        logprobs = net(inputs, target_mask(inputs, self.tokenizer.pad_id))  # (B, T, V)
        return cross_entropy(logprobs, targets, self.tokenizer.pad_id, config.label_smoothing)  # type: ignore[no-any-return]

    def measure(self, net: nn.Module) -> dict[str, Any]:
        assert isinstance(net, DecoderOnlyTransformer)
        assert isinstance(self.tokenizer, CharTokenizer)
        result = perplexity(net, self.tokenizer, self.corpus.held_out, self.corpus.train)
        return {
            "held_out_sentences": len(self.corpus.held_out),
            "perplexity": result.model,
            "unigram_perplexity": result.unigram,
        }

    def shown(self, metrics: dict[str, Any]) -> dict[str, float]:
        return {"ppl": metrics["perplexity"]}

    def description(self) -> dict[str, Any]:
        return {
            "name": "lm", "task": "lm", "description": LM_DESCRIPTION,
            "architecture": self.architecture, "max_source_len": MAX_CHARS,
        }  # fmt: skip


class InductionObjective(Objective):
    """A decoder-only model of random characters whose spans repeat (`repeats.py`): the only
    thing to learn is to continue a span as it went before, which induction heads do."""

    name = "induction"
    architecture = "decoder"
    held_out_seed = 10_007

    def __init__(self) -> None:
        self.tokenizer = CharTokenizer(INDUCTION_CHARS)

    def build(self, config: TransformerConfig) -> DecoderOnlyTransformer:
        return DecoderOnlyTransformer(config)

    def loss(
        self, net: nn.Module, rng: random.Random, config: TrainConfig, device: torch.device
    ) -> torch.Tensor:
        texts = [repeated_text(rng) for _ in range(config.batch_size)]
        inputs, targets = sentence_batch(self.tokenizer, texts, device)  # type: ignore[arg-type]
        logprobs = net(inputs, target_mask(inputs, self.tokenizer.pad_id))  # (B, T, V)
        return cross_entropy(logprobs, targets, self.tokenizer.pad_id, config.label_smoothing)  # type: ignore[no-any-return]

    def measure(self, net: nn.Module) -> dict[str, Any]:
        """Loss on each copy of held-out repeated blocks, each copy's first character left out
        (nothing can predict it)."""
        assert isinstance(net, DecoderOnlyTransformer)
        assert isinstance(self.tokenizer, CharTokenizer)
        blocks = repeated_blocks(200, self.held_out_seed)
        losses = character_losses(net, self.tokenizer, blocks.texts)  # (B, 2·block)
        b = blocks.block
        first, second = float(losses[:, 1:b].mean()), float(losses[:, b + 1 : 2 * b].mean())
        return {
            "held_out_blocks": len(blocks.texts),
            "block": b,
            "first_copy_loss": first,
            "second_copy_loss": second,
            "copy_loss_ratio": second / first,
        }

    def shown(self, metrics: dict[str, Any]) -> dict[str, float]:
        return {"ratio": metrics["copy_loss_ratio"]}

    def description(self) -> dict[str, Any]:
        return {
            "name": "induction", "task": "induction", "description": INDUCTION_DESCRIPTION,
            "architecture": self.architecture, "example": INDUCTION_EXAMPLE,
        }  # fmt: skip
