"""A Trace and a DecodeRun show a notebook a compact summary: text escaped, size bounded."""

from __future__ import annotations

import numpy as np

from attnlens.record.decode import BeamStep, DecodeRun, Hypothesis, StepRecord
from attnlens.record.trace import HTML_ITEMS, ModelInfo, Trace

HOSTILE = "<script>alert('x')</script>"
INFO = ModelInfo("<b>bold</b> model", "encoder", 1, 2, 8)


def trace(tokens: tuple[str, ...]) -> Trace:
    n = len(tokens)
    weights = np.full((1, 2, n, n), 1.0 / n, dtype=np.float32)
    return Trace(
        model=INFO, src_tokens=tokens, tgt_tokens=(), encoder_self=weights, decoder_self=None,
        cross=None, encoder_self_mask=np.ones((n, n), bool), decoder_self_mask=None,
        cross_mask=None, positional_encoding=None, tgt_logprobs=None, warnings=(HOSTILE,),
    )  # fmt: skip


def test_a_trace_summary_names_the_model_tokens_and_shapes_escaped() -> None:
    shown = trace(("[CLS]", HOSTILE, " ", "&amp;"))._repr_html_()
    assert "<script" not in shown and "<b>" not in shown
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in shown
    assert "&lt;b&gt;bold&lt;/b&gt; model (encoder, 1 layers × 2 heads, d_model 8)" in shown
    assert "[CLS] &lt;script&gt;" in shown and "␣ &amp;amp;" in shown  # a blank token shows
    assert "encoder_self 1×2×4×4" in shown


def test_a_long_trace_summary_stays_small() -> None:
    tokens = tuple(f"tok{i}" + "x" * 1000 for i in range(2000))
    shown = trace(tokens)._repr_html_()
    assert f"… ({2000 - HTML_ITEMS} more, 2000 in all)" in shown
    assert "tok23" in shown and "tok24" not in shown
    assert len(shown) < 6000


def test_a_decode_run_summary_shows_settings_output_and_score_escaped() -> None:
    steps = (
        StepRecord(0, (BeamStep(0, None, HOSTILE, -0.5, -0.5, "alive"),), ((),), None,
                   np.ones((1, 2, 1, 1), np.float32)),
        StepRecord(1, (BeamStep(0, 0, "</s>", -0.25, -0.75, "finished"),), ((),), None,
                   np.full((1, 2, 1, 2), 0.5, np.float32)),
    )  # fmt: skip
    best = Hypothesis((HOSTILE, "</s>"), HOSTILE, -0.75, True, -0.75, 1, 0)
    run = DecodeRun("greedy", {"max_len": 5}, ("a", "</s>"), (best,), steps, INFO)
    shown = run._repr_html_()
    assert "<script" not in shown and "<b>" not in shown
    assert "greedy (max_len=5)" in shown
    assert "-0.7500" in shown and "2 steps, 1 hypotheses" in shown
    assert "&lt;script&gt;" in shown
