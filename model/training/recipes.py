"""How each bundled model is built and trained: `make models` replays these with fixed seeds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.tokenizer import CharTokenizer
from attnlens.model.training.config import TrainConfig
from attnlens.model.training.corpus import CHARS
from attnlens.model.training.objectives import (
    InductionObjective,
    LanguageObjective,
    Objective,
    TaskObjective,
)
from attnlens.model.training.repeats import INDUCTION_CHARS
from attnlens.model.training.tasks import get_task
from attnlens.model.training.tasks.sort import SortRunsTask
from attnlens.record.errors import InputError


@dataclass(frozen=True)
class Recipe:
    """What to learn (an objective), a model size and a training schedule; `then`, the
    objective of a second stage (train.then_steps steps), when there is one."""

    name: str
    objective: Callable[[], Objective]
    model: TransformerConfig
    train: TrainConfig
    then: Callable[[], Objective] | None = None


def _small(vocab: int, max_len: int = 64, N: int = 2) -> TransformerConfig:
    """N layers (2 unless told), d_model 64, 4 heads: learns the character tasks in minutes."""
    return TransformerConfig(
        vocab, vocab, N=N, d_model=64, d_ff=256, h=4, dropout=0.1, max_len=max_len
    )


def _task(name: str, seed: int, steps: int, N: int = 2) -> Recipe:
    """A model of one of our tasks, trained with batches of 128 after 400 warm-up steps."""
    return Recipe(
        name,
        lambda: TaskObjective(get_task(name)),
        _small(len(get_task(name).tokenizer), N=N),
        TrainConfig(steps=steps, batch_size=128, warmup=400, seed=seed),
    )


SORT_THEN = 4000
_LM_VOCAB = len(CharTokenizer(CHARS))
_INDUCTION_VOCAB = len(CharTokenizer(INDUCTION_CHARS))
RECIPES: dict[str, Recipe] = {
    "reverse": _task("reverse", seed=0, steps=6000),
    # 3 layers: 2 drop ~2% of duplicates. After 10000 steps 96.5% of strings with one long run
    # came out right; a second stage with more of them lifts that (docs/models.md).
    "sort": replace(
        _task("sort", seed=1, steps=10000, N=3),
        train=TrainConfig(
            steps=10000, batch_size=128, warmup=400, seed=1, then_steps=SORT_THEN, then_seed=7
        ),
        then=lambda: TaskObjective(SortRunsTask()),
    ),
    "dates": _task("dates", seed=2, steps=3500),  # names in capitals too: 2500 was enough before
    "translate": _task("translate", seed=3, steps=4000),
    # 3 layers, room for a 120-character sentence and its two markers. No label smoothing:
    # the lm's probabilities are shown (temperature, top-k, top-p), so they should be the
    # model's own, and its perplexity an honest one.
    "lm": Recipe(
        "lm",
        LanguageObjective,
        TransformerConfig(_LM_VOCAB, _LM_VOCAB, N=3, d_model=64, d_ff=256, h=4, max_len=128),
        TrainConfig(steps=4000, batch_size=32, warmup=400, label_smoothing=0.0, eval_every=500),
    ),
    # 2 layers: the fewest an induction head needs (layer 0 marks each position with the token
    # before it, layer 1 looks for that mark). The lm's network, FFN included (docs/models.md). No
    # label smoothing or dropout: the copy losses and the heads' sharpness are measured.
    "induction": Recipe(
        "induction",
        InductionObjective,
        TransformerConfig(
            _INDUCTION_VOCAB,
            _INDUCTION_VOCAB,
            N=2,
            d_model=64,
            d_ff=256,
            h=4,
            dropout=0.0,
            max_len=64,
        ),
        # twice the §5.3 rate: at 1× the layer-0 heads stay blurred over the last 2-3 tokens
        # (previous-token score 0.63 after 3000 steps); at 2× one is sharp by step 1600
        TrainConfig(
            steps=2500,
            batch_size=64,
            warmup=400,
            lr_factor=2.0,
            label_smoothing=0.0,
            eval_every=500,
        ),
    ),
}


def get_recipe(name: str) -> Recipe:
    if name not in RECIPES:
        raise InputError(f"no training recipe for {name!r}; known: {', '.join(RECIPES)}")
    return RECIPES[name]
