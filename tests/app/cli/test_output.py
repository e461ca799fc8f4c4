"""The command line's --out files: replaced whole, with the permissions a plain write gives."""

from __future__ import annotations

import stat
from pathlib import Path

from attnlens.app.cli.output import write_text


def test_an_out_file_gets_the_permissions_open_would_give(tmp_path: Path) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text("{}")
    ours = tmp_path / "ours.json"
    write_text("{}", ours)
    assert stat.S_IMODE(ours.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
    assert ours.read_text() == "{}" and not list(tmp_path.glob(".*.part"))
