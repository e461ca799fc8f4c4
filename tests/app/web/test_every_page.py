"""Every page opens on every model attnlens lists, in its default state, without an exception.

Each model has a different shape (encoder-decoder with character or word tokens, decoder-only,
encoder-only from Hugging Face), and pages that assume one shape fail on another: this sweep
is how the Lessons traceback on `lm` and Decode's refused default on `lm` would have shown.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from attnlens import bundled_models
from attnlens.app.web.guides import GUIDES
from attnlens.app.web.main import PAGES
from attnlens.app.web.safe_text import md
from helpers.apptest import APP_SCRIPT

MODELS = [entry.name for entry in bundled_models()]


KINDS_ON = ("explore", "heads", "inside")  # pages with a kind picker: each kind is drawn too


@pytest.mark.parametrize("model_name", MODELS)
@pytest.mark.parametrize("page", [url for _, _, url in PAGES])
def test_page_opens_without_an_exception(page: str, model_name: str) -> None:
    """The page in its default state, then, where it has a kind picker, on every kind of
    attention the model records."""
    at = AppTest.from_file(APP_SCRIPT, default_timeout=120)
    at.query_params.update({"page": page, "model": model_name})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title and at.title[0].value  # the page drew itself, not just the sidebar
    assert not at.error, [e.value for e in at.error]
    if page in GUIDES:  # one line for a newcomer: what the page is for, where to start
        assert md(GUIDES[page]) in [c.value for c in at.caption]
    if page == "decode" and model_name == "minilm":  # an encoder does not generate: says where
        assert "nothing to decode" in at.info[0].value and "Explore" in at.info[0].value
        assert not at.number_input  # no decoding settings that could not be used
    if page in KINDS_ON:
        for kind in at.selectbox(key="w_kind").options:
            at.selectbox(key="w_kind").select(kind).run()
            assert not at.exception, (kind, [e.value for e in at.exception])
            assert not at.error, (kind, [e.value for e in at.error])


def test_a_projector_shows_no_guidance_line() -> None:
    """The teacher says it: presentation mode keeps the screen for the figure."""
    at = AppTest.from_file(APP_SCRIPT, default_timeout=120)
    at.query_params.update({"page": "explore", "model": "reverse", "present": "1"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert md(GUIDES["explore"]) not in [c.value for c in at.caption]
