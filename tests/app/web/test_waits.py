"""What a wait says (app/web/waits.py): seconds so far until the server has timed one as long,
then the share of about how long, scaled from the last one's tokens; quick work says nothing."""

from __future__ import annotations

import pytest

from attnlens.app.web.waits import GROWTH, Speeds, Wait, waited


def test_a_wait_says_seconds_so_far_until_it_knows_how_long() -> None:
    line, share = Wait("Reading 100 tokens with m").line(3.2)
    assert line == "Reading 100 tokens with m: 3 s so far …" and share is None
    line, share = Wait("Reading", 10.0).line(4.0)
    assert line == "Reading: 4 s of about 10 s …" and share == pytest.approx(0.4)
    line, share = Wait("Reading", 10.0).line(13.0)
    assert "longer than the 10 s expected" in line and share == 0.99


def test_the_expected_time_scales_from_the_last_one_timed() -> None:
    speeds = Speeds()
    assert speeds.expected("m", 1000) is None
    speeds.note("m", 1000, 4.0)
    assert speeds.expected("m", 2000) == pytest.approx(4.0 * 2**GROWTH)
    assert speeds.expected("m", 2000, growth=1.0) == pytest.approx(8.0)
    assert speeds.expected("other", 2000) is None and speeds.expected("m", 0) is None


def test_without_a_streamlit_page_the_work_is_done_and_its_error_raised() -> None:
    assert waited(None, Wait("x"), lambda: 42) == 42  # quick: no line drawn

    def bad() -> int:
        raise ValueError("text is empty")

    with pytest.raises(ValueError, match="text is empty"):
        waited(None, Wait("x"), bad)
