"""The command line run in the test's own process, its output read back."""

from __future__ import annotations

import pytest

from attnlens.app.cli.main import main


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`attnlens ARGS`: its exit status, standard output and standard error."""
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err
