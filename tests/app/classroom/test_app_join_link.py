"""The join link on the teacher's page (AppTest): text that copies as a working URL, with no
invisible characters, the same in the QR code; and, on a server that listens on loopback only,
the warning and the command that serves the class before the link."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from helpers.apptest import APP_SCRIPT, require_bundled

INVISIBLE = ("\u2060", "\u200b", "\u200c", "\u200d", "\ufeff", "\u00ad")


@pytest.fixture
def teacher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    """A teacher's lecture page that started a class (its own store file)."""
    require_bundled("translate")
    monkeypatch.setenv("ATTNLENS_CLASS_STORE", f"sqlite:///{tmp_path / 'classes.sqlite3'}")
    at = AppTest.from_file(APP_SCRIPT, default_timeout=120)
    at.query_params.update({"page": "lecture", "deck": "section3", "slide": "1"})
    at.run()
    at.button(key="lec_start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    yield at


def codes(at: AppTest) -> list[str]:
    return [c.value for c in at.code]


def test_the_link_as_shown_is_the_url_whole(
    teacher: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTNLENS_PUBLIC_URL", "https://attn.example.edu:8443")
    teacher.run()
    code = teacher.query_params["class"]
    link = f"https://attn.example.edu:8443/?class={code}"
    assert codes(teacher).count(link) == 2  # the class line and the QR code's
    bar = " ".join(m.value for m in teacher.markdown) + " ".join(codes(teacher))
    assert not [c for c in INVISIBLE if c in bar]
    assert not teacher.warning


def test_a_loopback_server_warns_with_the_command_before_the_link(
    teacher: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ATTNLENS_PUBLIC_URL", raising=False)
    before = config.get_option("server.address")
    config.set_option("server.address", "127.0.0.1")
    try:
        teacher.run()
    finally:
        config.set_option("server.address", before)
    said = " ".join(w.value for w in teacher.warning).replace("\\", "").replace("\u2060", "")
    assert "listens on 127.0.0.1 only" in said
    port = config.get_option("server.port")
    assert codes(teacher)[0] == f"attnlens serve --host 0.0.0.0 --port {port}"
    assert codes(teacher)[1].endswith(f"/?class={teacher.query_params['class']}")
