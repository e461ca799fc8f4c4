"""User and token text in Markdown messages shows as typed: nothing in it acts as Markdown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attnlens.app.web.safe_text import WORD_JOINER, md
from helpers.apptest import APP_SCRIPT


@pytest.mark.parametrize(
    "text", ["*bold*", "_it_", "<b>x</b>", "[a](javascript:x)", "`c`", ":smile:"]
)
def test_markdown_characters_are_escaped(text: str) -> None:
    escaped = md(text)
    unescaped = re.sub(r"\\(.)", r"\1", escaped).replace(WORD_JOINER, "")
    assert unescaped == text  # the word joiner after a colon keeps shortcodes literal
    assert not re.search(r"(?<!\\)[*_<>\[\]`:]", escaped)


def test_a_warning_quoting_user_text_escapes_it(tiny_model_dir: Path) -> None:
    at = AppTest.from_file(APP_SCRIPT, default_timeout=60)
    at.session_state["default_model"] = str(tiny_model_dir)
    at.query_params.update({"text": "ab*_<i>"})
    at.run()
    assert not at.exception
    warning = next(w.value for w in at.warning if "outside the vocabulary" in w.value)
    assert r"\'\*\', \'\_\', \'\<\', \'i\', \'\>\'" in warning  # each piece, escaped


def test_no_page_writes_user_text_as_markdown() -> None:
    """Markdown messages built from values go through md() (or md_items(), md() of each item
    of a list); fixed words are marked as such."""
    calls = re.compile(r"st\.(?:error|warning|info|success|caption|markdown|write|spinner)\((.*)")
    for path in Path(APP_SCRIPT).parent.rglob("*.py"):
        for line in path.read_text().splitlines():
            match = calls.search(line)
            if match is None or "fixed words" in line:
                continue
            argument = match.group(1).strip()
            fixed = argument.startswith('"') and "{" not in argument
            escaped = argument.startswith(("md(", "md_items("))
            assert fixed or escaped or argument == "", f"{path.name}: {line}"
