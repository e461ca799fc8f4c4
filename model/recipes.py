"""How each bundled model is built and trained: `make models` replays these with fixed seeds."""

from __future__ import annotations

from dataclasses import dataclass

from model.config import TransformerConfig
from model.tasks import get_task
from model.tasks.base import Task
from model.train import TrainConfig


@dataclass(frozen=True)
class Recipe:
    """A task, a model size and a training schedule."""

    task: str
    model: TransformerConfig
    train: TrainConfig

    def make_task(self) -> Task:
        return get_task(self.task)


def _small(vocab: int, max_len: int = 64, N: int = 2) -> TransformerConfig:
    """N layers (2 unless told), d_model 64, 4 heads: learns the character tasks in minutes."""
    return TransformerConfig(
        vocab, vocab, N=N, d_model=64, d_ff=256, h=4, dropout=0.1, max_len=max_len
    )


RECIPES: dict[str, Recipe] = {
    "reverse": Recipe(
        "reverse",
        _small(len(get_task("reverse").tokenizer)),
        TrainConfig(steps=6000, batch_size=128, warmup=400, seed=0),
    ),
    "sort": Recipe(
        "sort",
        _small(len(get_task("sort").tokenizer), N=3),  # 2 layers drop ~2% of duplicates
        TrainConfig(steps=6000, batch_size=128, warmup=400, seed=1),
    ),
    "dates": Recipe(
        "dates",
        _small(len(get_task("dates").tokenizer)),
        TrainConfig(steps=2500, batch_size=128, warmup=400, seed=2),
    ),
    "translate": Recipe(
        "translate",
        _small(len(get_task("translate").tokenizer)),
        TrainConfig(steps=4000, batch_size=128, warmup=400, seed=3),
    ),
}


def get_recipe(name: str) -> Recipe:
    if name not in RECIPES:
        raise ValueError(f"no training recipe for {name!r}; known: {', '.join(sorted(RECIPES))}")
    return RECIPES[name]
