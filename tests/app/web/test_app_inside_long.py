"""Inside the Transformer on a long input (issue 49: 1,001 tokens were refused with advice for
the command line, "raise ATTNLENS_MAX_RECORD_MB; or record='scores' (--record scores)", where
Explore and Decode coped): the page keeps the record as Explore does and draws what it can
from it, the masks in blocks. A GPT-2-shaped model with random weights, built here."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from helpers.apptest import figures, open_on
from helpers.long_gpt2 import long_gpt2, words

N = 560  # 561 positions with the start token


def array(value: dict[str, str]) -> np.ndarray:
    """A figure's array, as Plotly writes it: typed binary data."""
    flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return flat.reshape([int(n) for n in value["shape"].split(",")])


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return long_gpt2(tmp_path_factory.mktemp("long_gpt2"))


def test_a_long_input_past_the_budget_opens_with_its_masks_in_blocks(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")  # 2 × 2 heads × 561² weights: 5 MB
    at = open_on(model_dir, "inside", text=words(N), timeout=120)
    assert not at.exception and not at.error
    said = " ".join(m.value for m in [*at.info, *at.warning, *at.caption])
    assert "--record" not in said and "ATTNLENS_MAX_RECORD_MB" not in said
    masks = next(f for f in figures(at) if "masks of" in f["layout"]["title"]["text"])
    applied = masks["data"][2]  # padding, causal, applied
    assert len(applied["y"]) == len(applied["x"]) <= 64  # blocks, not 561 × 561 cells
    assert applied["x"][0] == "0–8" and applied["x"][-1].endswith("–560")
    z = array(applied["z"])
    assert z[0][0] == pytest.approx(45 / 81)  # a block on the diagonal: causal, 45 of 81 cells
    assert z[0][-1] == 0 and z[-1][0] == 1  # the future blocked, the past allowed
    assert "561 × 561 positions in blocks of 9×9" in masks["layout"]["title"]["text"]
    assert len(json.dumps(masks)) < 2_000_000
