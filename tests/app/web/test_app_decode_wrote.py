"""Decode's "Which heads wrote this token" under AppTest: closed, it computes nothing; opened on lm
and translate, the figure's parts (heads, embeddings, MLPs, biases) sum to the logit its title
and caption show, for the token decoded and for another candidate; a decoder without the part
says why in one line."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attnlens.app.web.decode.wrote import KEY
from helpers.apptest import chart, open_bundled, open_on, step_views
from helpers.hf_zoo import variant

TITLE = "which parts wrote"


def opened(at: AppTest) -> AppTest:
    at.session_state[KEY] = True
    return at.run()


def array(value: Any) -> np.ndarray:
    """A figure's numbers, as nested lists or as Plotly's typed binary data."""
    if isinstance(value, dict):
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        return flat.astype(np.float64)
    return np.asarray(value, dtype=np.float64)


def parts_sum(spec: dict[str, Any]) -> tuple[float, float]:
    """(the sum of every part the figure draws, the logit its title names); the bars' "all …
    heads" rows repeat the heatmaps' sums and are left out."""
    total = 0.0
    for trace in spec["data"]:
        if trace["type"] == "heatmap":
            total += float(array(trace["z"]).sum())
        else:
            for label, value in zip(trace["y"], array(trace["x"]), strict=True):
                total += 0.0 if str(label).startswith("all ") else float(value)
    logit = re.search(r"logit ([+-][0-9.]+)", spec["layout"]["title"]["text"])
    assert logit is not None
    return total, float(logit.group(1))


@pytest.mark.parametrize(("model", "kinds"), [("lm", 1), ("translate", 2)])
def test_the_parts_shown_sum_to_the_logit_shown(model: str, kinds: int) -> None:
    at = open_bundled("decode", model, timeout=120, step="1")
    assert not at.exception
    assert not [s for s in (e.proto.spec for e in at.get("plotly_chart")) if TITLE in s]
    at = opened(at)
    assert not at.exception and not at.error
    spec = chart(at, TITLE)
    assert sum(t["type"] == "heatmap" for t in spec["data"]) == kinds
    total, logit = parts_sum(spec)
    assert abs(total - logit) <= 1e-3 * max(1.0, abs(logit))  # the title rounds to 4 places
    line = next(c.value for c in at.caption if c.value.startswith("embeddings"))
    assert f"logit {logit:+.4f}" in line.replace("\\", "")
    picker = next(s for s in at.selectbox if s.label == "Token")
    assert picker.options[0].endswith("(decoded)") and len(picker.options) > 1
    picker.select_index(len(picker.options) - 1).run()
    spec2 = chart(at, TITLE)
    total2, logit2 = parts_sum(spec2)
    assert abs(total2 - logit2) <= 1e-3 * max(1.0, abs(logit2)) and logit2 != logit


def test_a_decoder_without_the_part_says_why(tmp_path: Path) -> None:
    folder = variant("opt", tmp_path, {"do_layer_norm_before": False}, {})
    at = opened(open_on(folder, "decode", text="the cat sat"))
    assert not at.exception
    reason = next(c.value for c in at.caption if c.value.startswith("Not for this model"))
    assert "do_layer_norm_before" in reason.replace("\\", "") and "\n" not in reason
    assert not [s for s in (e.proto.spec for e in at.get("plotly_chart")) if TITLE in s]


def test_under_beam_search_the_default_token_is_the_one_the_followed_path_took() -> None:
    """At a step where several beams extend the followed row, the token asked about is the one
    on the followed path (the step view's last token), not merely that row's likeliest child."""
    at = opened(open_bundled("decode", "lm", timeout=120, strategy="beam", step="3"))
    assert not at.exception
    (view,) = step_views(at)
    taken = view["steps"][3]["tokens"].split(" ")[-1]
    picker = next(s for s in at.selectbox if s.label == "Token")
    assert str(picker.value).replace(" ", "␣") == taken
    assert picker.options[0].endswith("(decoded)")
