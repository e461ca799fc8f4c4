"""Whatever arguments arrive, the command line answers with a record or one line and status 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from attnlens.app.cli.main import main

ANY_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["", " ", "\x00", "<script>alert(1)</script>", "😀" * 3, "a" * 500, "-x", "--"]
    ),
)
FLAGS = st.lists(
    st.sampled_from(
        [
            "--strategy",
            "beam",
            "sample",
            "greedy",
            "nope",
            "--beam-size",
            "0",
            "99",
            "3",
            "--max-len",
            "-1",
            "5",
            "100000",
            "--temperature",
            "0",
            "nan",
            "-2",
            "0.7",
            "--top-k",
            "0",
            "2",
            "--top-p",
            "1.5",
            "0.9",
            "--seed",
            "-1",
            "7",
            "--force",
            "0=a",
            "9=zz",
            "x=y",
            "--ablate",
            "0.0",
            "7.7",
            "cross:1.1",
            "bogus",
            "--length-penalty",
            "0.6",
        ]
    ),
    max_size=6,
)


def check(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    else:
        assert out.startswith("{")


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=ANY_TEXT, flags=FLAGS)
@example(text="abc", flags=["--strategy", "beam", "--beam-size", "3"])
@example(text="<script>", flags=["--strategy", "sample", "--seed", "7", "--top-p", "0.9"])
def test_decode_never_crashes(
    text: str, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    check(["decode", "reverse", text, *flags], capsys)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=ANY_TEXT,
    target=st.one_of(st.none(), ANY_TEXT),
    model=st.sampled_from(["reverse", "nope", "/", ""]),
)
def test_trace_never_crashes(
    text: str, target: str | None, model: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    check(["trace", model, text] + ([] if target is None else ["--target", target]), capsys)
