"""What each key gives each head, ‖f_h(xⱼ)‖ (record/norms.py), for one text read by a Hugging Face
encoder or decoder-only model: from the values its own attention received, through each head's
own slice of W^O (hf/norms.py). The lecture's "a weight is not what a head carries" slide reads
it here until every trace records its norms (issue 47, items 1–3); elsewhere, why not."""

from __future__ import annotations

import torch

from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.hf.norms import head_norms
from attnlens.model.lenses.lens import Lens
from attnlens.record.norms import HeadNorms
from attnlens.record.trace import Kind


def carried_norms(lens: Lens, text: str) -> dict[Kind, HeadNorms] | str:
    """Every kind's norms for text (the positions `trace` reads), or the reason there are none,
    fit to show; a HeadsError (an InputError) naming why where the model's W^O or values
    cannot be stated."""
    if not isinstance(lens, HFLens):
        return (
            f"what {lens.name}'s heads carry is measured here on Hugging Face encoders and "
            "decoder-only models (minilm, GPT-2 …)"
        )
    if lens.architecture == "encoder-decoder":
        return f"{lens.name} is an encoder-decoder: pick an encoder such as minilm"
    runs = lens.capabilities.token_runs
    assert runs is not None, "every Hugging Face model runs on token ids"
    ids = torch.tensor([runs.token_ids(text)], device=lens.device)  # (1, T)
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    return head_norms(lens.model, str(lens.model.config.model_type), lens.info, inputs)
