"""Fixtures of the figure tests: synthetic records (tests/helpers/synth.py)."""

from __future__ import annotations

import pytest

from attnlens.record.trace import Trace
from helpers import synth as synthetic


@pytest.fixture
def trace() -> Trace:
    return synthetic.make_trace()


@pytest.fixture
def markup_trace() -> Trace:
    """Tokens that are HTML: they must show literally, never be rendered."""
    markup = synthetic.MARKUP
    return synthetic.make_trace(src=(*markup, "</s>"), tgt=("<s>", *markup))


class Synth:
    """The synthetic-record helpers, handed to tests as a fixture."""

    make_trace = staticmethod(synthetic.make_trace)
    pattern = staticmethod(synthetic.pattern)
    sinusoid = staticmethod(synthetic.sinusoid)
    markup = synthetic.MARKUP
    beam_run = staticmethod(synthetic.beam_run)
    beam_run_past_the_output = staticmethod(synthetic.beam_run_past_the_output)
    greedy_run = staticmethod(synthetic.greedy_run)


@pytest.fixture
def synth() -> type[Synth]:
    return Synth
