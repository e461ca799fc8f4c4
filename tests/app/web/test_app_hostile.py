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
from helpers import crafted
from helpers.apptest import APP_SCRIPT, open_bundled, open_on, require_bundled
from helpers.tiny import save_tiny_model

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


@pytest.mark.parametrize("server", [False, True])
def test_a_name_with_a_null_byte_in_a_link_is_one_message(
    server: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39's `reverse\\x00` passed the server's check, then failed with a raw ValueError
    (embedded null byte); issue 45 asked for it again through the page."""
    if server:
        monkeypatch.setenv("ATTNLENS_SERVER_MODE", "1")
    at = AppTest.from_file(APP_SCRIPT, default_timeout=60)
    at.query_params.update({"page": "explore", "model": "reverse\x00"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (error,) = [e.value for e in at.error]
    assert "holds no control characters" in error


def test_a_folder_through_dot_dot_is_the_folder_it_resolves_to_on_a_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 39's `/allowed/m1/sub/..` loaded under the name `..`: the page opens it as the
    allowed folder it is (its name, m1, is checked through the command line and the library),
    and `..` out of the allowed folder is refused."""
    folder = save_tiny_model(tmp_path / "m1")
    (folder / "sub").mkdir()
    monkeypatch.setenv("ATTNLENS_SERVER_MODE", "1")
    monkeypatch.setenv("ATTNLENS_ALLOWED_MODELS", str(folder))
    at = open_on(folder / "sub" / "..", "explore", text="abc")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.get("plotly_chart") or at.get("component_instance")  # the heads drawn
    out = open_on(folder / "..", "explore", text="abc")
    (error,) = [e.value for e in out.error]
    assert "not allowed on this server" in error and str(tmp_path) not in error


def test_a_config_whose_task_is_a_list_is_one_message_on_the_page(tmp_path: Path) -> None:
    """Issue 39: `"task": ["reverse"]` ended in TypeError: unhashable type: 'list'."""
    folder = crafted.build_own("task is a list", tmp_path)
    at = open_on(folder, "explore", text="abc")
    assert not at.exception, [e.value for e in at.exception]
    (error,) = [e.value for e in at.error]
    assert "'task' must be a JSON string, but it is a JSON list" in error.replace("\\", "")
