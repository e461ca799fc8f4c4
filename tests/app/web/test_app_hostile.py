"""What a link or a class server can throw at the pages: a model name full of Markdown
shortcodes, server mode on the Training page. Each page answers with a message fit to read
(no exception, no server path). Text that is not valid Unicode is in test_browser_hostile.py:
AppTest cannot put it in a link."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attnlens.app.web.safe_text import WORD_JOINER
from attnlens.model.lenses.registry import BUNDLED_DIR
from helpers.apptest import APP_SCRIPT, open_bundled, open_on, require_bundled

SHORTCODES = ":material/warning: :red[x] :streamlit:"


def shown_text(at: AppTest) -> list[str]:
    """Every message, caption, title and text element of the page."""
    kinds = ("error", "warning", "info", "caption", "title", "text", "markdown", "success")
    return [str(e.value) for kind in kinds for e in at.get(kind)]


def test_markdown_shortcodes_in_a_model_name_are_shown_as_typed() -> None:
    at = AppTest.from_file(APP_SCRIPT, default_timeout=60)
    at.query_params.update({"page": "explore", "model": SHORTCODES})
    at.run()
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert f"\\:{WORD_JOINER}material/warning\\:{WORD_JOINER}" in error
    assert f"\\:{WORD_JOINER}streamlit\\:{WORD_JOINER}" in error and "\\[x\\]" in error


def test_the_training_page_works_in_server_mode_and_shows_no_server_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_bundled("reverse")
    monkeypatch.setenv("ATTNLENS_SERVER_MODE", "1")
    at = open_bundled("training", "reverse", text="abc", timeout=180)
    assert not at.exception and not at.error, [e.value for e in at.error]
    steps = at.select_slider(key="w_snapshot").options
    at.select_slider(key="w_snapshot").set_value(steps[0]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) >= 2
    assert not [t for t in shown_text(at) if str(BUNDLED_DIR) in t or "/bundled/" in t]


def test_in_server_mode_a_refused_folder_names_only_what_was_typed(
    monkeypatch: pytest.MonkeyPatch, tiny_model_dir: Path
) -> None:
    monkeypatch.setenv("ATTNLENS_SERVER_MODE", "1")
    monkeypatch.setenv("ATTNLENS_ALLOWED_MODELS", "/srv/operators/private-model, org/private")
    at = open_on(tiny_model_dir, "training")
    (error,) = [e.value for e in at.error]
    assert "not allowed on this server" in error and "ATTNLENS\\_ALLOWED\\_MODELS" in error
    assert str(BUNDLED_DIR) not in error and "private" not in error  # nor the allow-list


def test_a_model_loaded_before_server_mode_is_not_handed_out_by_the_cache(
    monkeypatch: pytest.MonkeyPatch, tiny_model_dir: Path
) -> None:
    at = open_on(tiny_model_dir, "explore", text="abc")
    assert not at.exception and not at.error, [e.value for e in at.error]
    monkeypatch.setenv("ATTNLENS_SERVER_MODE", "1")
    at = open_on(tiny_model_dir, "explore", text="abc")
    (error,) = [e.value for e in at.error]
    assert "not allowed on this server" in error
