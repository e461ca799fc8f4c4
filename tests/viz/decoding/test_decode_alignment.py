"""The cross-attention row each decoding step added, along the chosen hypothesis."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnlens.viz import decoding_alignment


def test_one_row_per_step_of_the_chosen_path(synth: type) -> None:
    run = synth.beam_run()
    steps = list(run.steps)
    cross = np.zeros((1, 1, 2, 2), dtype=np.float32)
    cross[0, 0, 0] = [0.9, 0.1]  # live row 0 at step 1: the one the chosen path extends
    cross[0, 0, 1] = [0.2, 0.8]
    steps[1] = replace(steps[1], cross_attention=cross)
    heat = decoding_alignment(replace(run, steps=tuple(steps))).data[0]
    np.testing.assert_allclose(heat.z, [[0.5, 0.5], [0.9, 0.1]])
    assert list(heat.y) == ["step 0 → a", "step 1 → &lt;/s&gt;"]
    assert list(heat.x) == ["0 · p", "1 · q"]


def test_every_source_token_is_labelled_when_they_fit(synth: type) -> None:
    """Plotly drops category labels it finds crowded: on a third of 1400 px, translate's six
    source words showed three."""
    fig = decoding_alignment(synth.beam_run())
    assert fig.layout.xaxis.dtick == 1


def test_bad_layer_and_missing_cross_attention_are_named(synth: type) -> None:
    run = synth.beam_run()
    with pytest.raises(ValueError, match="layer 3"):
        decoding_alignment(run, layer=3)
    bare = replace(run, steps=tuple(replace(s, cross_attention=None) for s in run.steps))
    with pytest.raises(ValueError, match="no cross-attention"):
        decoding_alignment(bare)
