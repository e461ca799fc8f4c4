"""`attnlens trace --out` writes JSON, CSV and NPZ piece by piece: its peak memory is the
record's, not that of the record as Python lists, a DataFrame and a string (the issue measured
2.2 GB for a 416 MB JSON file and 4.3 GB for an 857 MB CSV)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attnlens.app.cli.main import main
from attnlens.record.trace import Trace
from helpers.memory import own_peak, reset_own_peak
from helpers.tiny import LONG_LM_POSITIONS as LONG

MB = 2**20


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["json", "csv", "npz"])
def test_writing_a_record_takes_memory_for_the_record_not_its_text(
    long_lm_dir: Path, tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "ab" * ((LONG - 2) // 2)
    record_bytes = 2 * 4 * (len(text) + 1) ** 2 * 4
    out = tmp_path / f"trace.{fmt}"
    main(["trace", str(long_lm_dir), text, "--out", str(out)])  # warm: torch's first call allocates
    if not reset_own_peak():
        pytest.skip("this kernel does not let a process reset its peak RSS")
    before = own_peak()
    assert main(["trace", str(long_lm_dir), text, "--format", fmt, "--out", str(out)]) == 0
    grown = own_peak() - before
    assert grown < 2 * record_bytes + 48 * MB, f"{fmt}: peak grew {grown / MB:.0f} MB"
    if fmt == "npz":
        tr = Trace.from_npz(out.read_bytes())
        assert tr.decoder_self is not None and tr.decoder_self.shape == (2, 4, LONG - 1, LONG - 1)
        np.testing.assert_allclose(tr.decoder_self.sum(-1), 1.0, atol=1e-5)
    capsys.readouterr()
