"""Heads on a long input under AppTest (issue 36): past the budget the trace keeps scores, and the
statistics and tags come from its summaries, equal to those of the weights; rollout says how many
positions it draws. A GPT-2-shaped model with random weights, built here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import attnlens
from helpers.apptest import open_on
from helpers.long_gpt2 import words

N = 560  # past the rollout's 512 positions


def test_heads_on_a_long_input_tabulates_every_head_from_the_summaries(
    long_gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    want = attnlens.analysis.head_statistics(attnlens.load(str(long_gpt2_dir)).trace(words(N)))
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")  # 2 × 2 heads × 561² weights: 5 MB
    at = open_on(long_gpt2_dir, "heads", text=words(N))
    assert not at.exception and not at.error
    (table,) = [t.value for t in at.dataframe if "entropy" in t.value.columns]
    assert len(table) == len(want) == 4
    for column in ("entropy", "mean_distance", "self", "previous", "first", "induction"):
        np.testing.assert_allclose(
            table[column], want[column], rtol=1e-5, atol=1e-5, err_msg=column
        )
    infos = " ".join(i.value for i in at.info)
    assert "at most 512 positions, and this input has 561" in infos
