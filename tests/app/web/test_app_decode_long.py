"""Decode after a long prompt under AppTest (issue 36): the prompt is read whole, each step records
its own row over every key (O(L·H·T) a step), and the step view shows a step's weights over all of
the prompt's positions. A GPT-2-shaped model with random weights, built here."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.apptest import drawn_by_browser, open_on
from helpers.long_gpt2 import words

N = 560


def test_decoding_after_a_long_prompt_steps_over_every_prompt_position(
    long_gpt2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1")  # the prompt's weights (5 MB) would not fit
    at = open_on(long_gpt2_dir, "decode", text=words(N))
    assert not at.exception and not at.error
    (view,) = drawn_by_browser(at, "attnlens_steps")
    first = view["steps"][0]  # type: ignore[index]
    (panel,) = first["attention"]["panels"]
    assert len(panel["weights"]) >= N  # the new token's row over the whole prompt
    assert abs(sum(panel["weights"]) - 1) < 0.01
