"""attnlens: see what every attention head of a Transformer looks at.

    import attnlens
    lens = attnlens.load("reverse")          # a bundled model, a folder, or a hub id
    tr = lens.trace("hello world")           # a Trace record: numpy arrays
    fig = attnlens.head_heatmap(tr, "cross", layer=1, head=0)
    lens.capabilities                        # what else it can do: each part, or None and why
    lens = attnlens.wrap(hf_model, tokenizer)    # a Hugging Face model already in memory
    tr = attnlens.from_hf(outputs, tokens)       # attention a notebook already computed

Importing attnlens loads numpy, pandas and plotly but not torch: records and figures work in a
notebook without it; `load` brings torch in when a model is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnlens import analysis, viz
from attnlens.analysis import *  # noqa: F403  (rollout, flow, head statistics)
from attnlens.model.lenses.hf.outputs import from_hf
from attnlens.model.lenses.lens import Lens
from attnlens.notebook import notebook_mode
from attnlens.record import (
    DecodeRun,
    InputError,
    ModelInfo,
    ModelNotFoundError,
    Trace,
)
from attnlens.viz import *  # noqa: F403  (every figure function, as attnlens.viz lists them)

if TYPE_CHECKING:
    from attnlens.model.lenses.registry import ModelEntry
    from attnlens.record.experiment import ExperimentResult


def load(name_or_path: str, device: str = "auto") -> Lens:
    """A model by bundled name (`attnlens models`), folder, or Hugging Face hub id, ready to
    trace and decode; loaded once, safe to share between threads."""
    from attnlens.model.lenses.registry import load as load_lens

    return load_lens(name_or_path, device)


def wrap(model: object, tokenizer: object, name: str | None = None) -> Lens:
    """A Lens over a Hugging Face model already in memory (encoder, decoder or encoder-decoder)
    and its tokenizer, sharing its weights: each call switches the model to eager attention and
    eval mode and restores what it had; calls over one model run one at a time."""
    try:
        from attnlens.model.lenses.hf.wrap import wrap as wrap_model
    except ImportError:
        raise InputError(
            "attnlens.wrap needs the transformers package: pip install 'attnlens[hf]'"
        ) from None
    return wrap_model(model, tokenizer, name)


def experiment(
    name: str, model: str | Lens, n: int | None = None, seed: int = 0
) -> ExperimentResult:
    """One of the head experiments (`induction`, `importance`, `explanation`, `alignment`) on a
    model (a name, folder or loaded lens), read from the cache when it was run before."""
    from attnlens.analysis.experiments.catalog import run_experiment

    lens = load(model) if isinstance(model, str) else model
    return run_experiment(lens, name, n, seed).result


def bundled_models() -> list[ModelEntry]:
    """The models that load by name."""
    from attnlens.model.lenses.registry import bundled_models as listed

    return listed()


__all__ = [
    "DecodeRun",
    "InputError",
    "Lens",
    "ModelInfo",
    "ModelNotFoundError",
    "Trace",
    "bundled_models",
    "experiment",
    "from_hf",
    "load",
    "notebook_mode",
    "wrap",
    *analysis.__all__,
    *viz.__all__,
]
