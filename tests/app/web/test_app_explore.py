"""The Explore page under AppTest: renders, follows the text and the controls, keeps the URL."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from attnlens.model.lenses.seq2seq import Seq2SeqLens
from helpers.apptest import (
    chart,
    head_grids,
    lines_views,
    open_bundled,
    open_on,
    require_bundled,
)

ROOT = Path(__file__).resolve().parents[3]


def open_page(model_dir: Path, page: str = "explore", **params: str) -> AppTest:
    return open_on(model_dir, page, **params)


def heatmap(at: AppTest) -> dict[str, Any]:
    spec = chart(at, "", at_start=True)
    assert spec["data"][0]["type"] == "heatmap"
    return spec


def test_default_render_shows_heatmap_lines_and_every_head(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    assert not at.exception and not at.error
    assert at.title[0].value == "Explore"
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert len(titles) == 1  # the heatmap; the lines and every head are drawn by the browser
    assert titles[0].startswith("cross-attention") and titles[0].endswith("layer 1 · head 0")
    (lines,) = lines_views(at)
    assert lines["title"] == "cross-attention (decoder → encoder)\nlayer 1 · head 0"
    (grid,) = head_grids(at)
    assert grid["title"].startswith("cross-attention") and grid["selected"] == [1, 0]


def test_typing_changes_the_figure(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    before = heatmap(at)
    at.text_input(key="w_text").input("bad").run()
    at.text_input(key="w_target").input("dab").run()
    assert not at.exception and not at.error
    after = heatmap(at)
    assert before != after
    cells = after["data"][0]
    assert len(cells["x"]) == 4 and len(cells["y"]) == 4  # b a d </s>; <s> d a b
    assert [label[-1] for label in cells["x"][:3]] == ["b", "a", "d"]
    assert at.query_params["text"] == "bad" and at.query_params["target"] == "dab"


def test_layer_and_head_change_the_figure_without_tracing_again(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_page(tiny_model_dir)
    calls = []
    original = Seq2SeqLens.trace
    monkeypatch.setattr(
        Seq2SeqLens, "trace", lambda self, *a, **k: calls.append(a) or original(self, *a, **k)
    )
    before = heatmap(at)["data"][0]["z"]
    at.selectbox(key="w_head").select(1).run()
    at.selectbox(key="w_layer").select(0).run()
    at.selectbox(key="w_kind").select("encoder_self").run()
    spec = heatmap(at)
    assert spec["layout"]["title"]["text"] == "encoder self-attention · layer 0 · head 1"
    assert spec["data"][0]["z"] != before
    assert calls == []  # the model ran once, before the controls moved
    assert (at.query_params["layer"], at.query_params["head"]) == ("0", "1")


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "empty"), ("abcdefgh" * 4, "at most")],
)
def test_bad_input_shows_a_message_not_an_exception(
    tiny_model_dir: Path, text: str, message: str
) -> None:
    at = open_page(tiny_model_dir)
    at.text_input(key="w_text").input(text).run()
    assert not at.exception
    assert any(message in e.value for e in at.error)
    assert not at.get("plotly_chart")


def test_unsupported_characters_are_named_in_a_warning(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, text="ab*_<b>")
    assert not at.exception
    assert any("outside the vocabulary" in w.value for w in at.warning)
    assert at.get("plotly_chart")


def test_odd_input_on_reverse_is_one_warning_that_draws_an_emoji_whole() -> None:
    """Issue 49: odd input on `reverse` stacked three warnings (the task's, the tokenizer's,
    the length's), and they wrote an emoji's zero-width joiner as \\u200d."""
    family = "\U0001f469\u200d\U0001f469\u200d\U0001f467"  # one emoji of five code points
    at = open_bundled("explore", "reverse", text=f"Ça va? {family} ½ ﬁn — naïve tab\tend")
    assert not at.exception
    [warning] = [w.value.replace("\\", "") for w in at.warning]  # Markdown escapes dropped
    assert warning.count("\n- ") == 2 and warning.startswith("- ")  # three items, one box
    assert "u200d" not in warning
    assert f"'{family}'" in warning  # the emoji whole, among the characters it cannot read
    assert "U+200D ZERO WIDTH JOINER" in warning  # the joiner alone, read as <unk>, by name


def test_a_model_that_fails_to_load_shows_a_message(tmp_path: Path) -> None:
    at = open_page(tmp_path / "nowhere")
    assert not at.exception
    assert any("Could not load model" in e.value for e in at.error)


def test_a_name_too_long_to_be_a_file_is_named_clipped_with_the_limit() -> None:
    """A 2,000-character name, typed or linked, filled the page twice over."""
    at = open_page(Path("a" * 2000))
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert "at most 255 bytes" in error and "2000 characters" in error
    assert len(error) < 300, error


def test_query_params_restore_the_view(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, text="bad", target="dab", kind="cross", layer="0", head="1")
    assert not at.exception
    spec = heatmap(at)
    assert spec["layout"]["title"]["text"].endswith("layer 0 · head 1")
    assert [label[-1] for label in spec["data"][0]["x"][:3]] == ["b", "a", "d"]
    assert at.text_input(key="w_text").value == "bad"


def test_a_bad_link_falls_back_to_defaults(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, layer="9", head="x", kind="nonsense")
    assert not at.exception and not at.error
    assert heatmap(at)["layout"]["title"]["text"].endswith("layer 1 · head 0")


def test_presentation_mode_enlarges_figure_fonts(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    at.toggle(key="w_present").set_value(True).run()
    assert not at.exception
    assert heatmap(at)["layout"]["font"]["size"] >= 20


def test_no_page_lets_html_through() -> None:
    sources = [p.read_text() for p in (ROOT / "app").rglob("*.py")]
    assert not [s for s in sources if "unsafe_allow_html" in s]


def test_a_link_can_open_presentation_mode(tiny_model_dir: Path) -> None:
    assert heatmap(open_page(tiny_model_dir, present="1"))["layout"]["font"]["size"] >= 20
    assert "font" not in heatmap(open_page(tiny_model_dir, present="0"))["layout"]


def test_the_sidebar_switches_to_a_bundled_model(tiny_model_dir: Path) -> None:
    from attnlens.app.web.sidebar import OTHER, bundled_names

    names = [n for n in bundled_names() if n != "minilm"]  # minilm is slower to load
    if not names:
        pytest.skip("no bundled model is trained yet")
    at = open_page(tiny_model_dir)
    assert at.selectbox(key="w_model_choice").value == OTHER
    at.selectbox(key="w_model_choice").select(names[0]).run()
    assert not at.exception and not at.error
    assert at.query_params["model"] == names[0]
    assert at.get("plotly_chart")
    at.selectbox(key="w_model_choice").select(OTHER).run()
    at.text_input(key="w_model_path").input(str(tiny_model_dir)).run()
    assert at.query_params["model"] == str(tiny_model_dir) and not at.error


def test_dark_theme_figures_drop_their_white_background(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attnlens.app.web import show

    monkeypatch.setattr(show, "_dark", lambda: True)
    layout = heatmap(open_page(tiny_model_dir))["layout"]
    assert layout["plot_bgcolor"] == layout["paper_bgcolor"] == "rgba(0,0,0,0)"


def test_figures_download_as_html_and_when_possible_png_and_svg(tiny_model_dir: Path) -> None:
    from attnlens.app.web import downloads, show

    at = open_page(tiny_model_dir)
    keys = {b.key for b in at.get("download_button")}
    assert {"heatmap_download", "trace_json", "trace_csv"} <= keys
    if not show.can_export_images():
        pytest.skip("PNG and SVG export needs kaleido and a Chromium")
    assert {"heatmap_png", "heatmap_svg"} <= keys
    png = io.BytesIO()
    downloads.image_writer(go.Figure(go.Heatmap(z=[[0.0, 1.0]])), "png")(png)
    assert png.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_text_follows_each_models_example_until_the_user_types() -> None:
    require_bundled("reverse", "dates")
    at = open_bundled("explore", "reverse")
    assert at.text_input(key="w_text").value == "Hello, World!"
    at.selectbox(key="w_model_choice").select("dates").run()
    assert at.text_input(key="w_text").value == "sat 21 nov 2026"
    assert not at.warning, "the example is in the model's vocabulary"
    at.text_input(key="w_text").input("1/2/2003").run()
    at.selectbox(key="w_model_choice").select("reverse").run()
    assert at.text_input(key="w_text").value == "1/2/2003" and not at.exception


def test_the_output_line_spells_word_outputs_with_spaces() -> None:
    at = open_bundled("explore", "translate")
    assert not at.exception
    assert "Output: lo gat vid un ca dom" in [t.value for t in at.text]


def test_translate_s_first_screen_opens_without_a_warning_of_its_own_example() -> None:
    """Issue 49: its example was "The cat sees a house.", and the first screen opened with a
    warning that the model had lower-cased it."""
    at = open_bundled("explore", "translate")
    assert at.text_input(key="w_text").value == "the cat sees a house"
    assert not at.warning and not at.exception


def test_translate_says_that_typed_text_is_lower_cased() -> None:
    at = open_bundled("explore", "translate", text="The cat sees a house.")
    [warning] = [w.value.replace("\\", "") for w in at.warning]  # Markdown escapes dropped
    assert "reads lower-case words without punctuation" in warning
    assert "'the cat sees a house'" in warning


def test_cross_attention_circles_the_true_alignment_when_the_task_knows_it() -> None:
    at = open_bundled("explore", "translate", layer="1", head="0")
    spec = heatmap(at)
    circles = spec["data"][-1]
    assert circles["type"] == "scatter" and circles["name"] == "true source"
    assert circles["x"] == ["0 · the", "1 · cat", "2 · sees", "3 · a", "4 · house", "4 · house"]
    assert spec["layout"]["title"]["subtitle"]["text"].startswith("argmax on the true source: ")
    at.selectbox(key="w_kind").select("encoder_self").run()
    assert heatmap(at)["data"][-1]["type"] == "heatmap"  # circles on cross-attention only
    at = open_bundled("explore", "reverse", target="wrong")
    assert not at.exception
    shown = [c.value.replace("\\", "") for c in at.caption]  # captions are markdown-escaped
    assert any("The right answer is “!dlroW ,olleH”, not “wrong”" in c for c in shown), shown
    assert heatmap(at)["data"][-1]["type"] == "heatmap"
    at = open_bundled("explore", "dates")  # "sat 21 nov 2026"
    circles = heatmap(at)["data"][-1]
    assert circles["type"] == "scatter" and len(circles["x"]) == len("2026-11-21")


def test_the_measure_control_draws_the_norms_and_says_so(tiny_model_dir: Path) -> None:
    """Measure: norm redraws the heatmap as weight × the key's norm, named in its title and
    colour bar, and goes in the address, the lines view said to stay weights; weight draws the
    weights again."""
    at = open_page(tiny_model_dir)
    before = heatmap(at)
    at.radio(key="w_measure").set_value("norm").run()
    assert not at.exception and not at.error
    after = heatmap(at)
    assert after["layout"]["title"]["text"].endswith("· norm α‖f(x)‖")
    assert after["data"][0]["colorbar"]["title"]["text"].startswith("norm α‖f(x)‖ ÷ ")
    assert after["data"][0]["z"] != before["data"][0]["z"]
    assert at.query_params["measure"] == "norm"
    lines_said = "The lines show the weights αᵢⱼ; Measure colours the heatmap and heads."
    assert lines_said in [c.value for c in at.caption]  # the lines stay weights: said so
    at.radio(key="w_measure").set_value("weight").run()
    assert heatmap(at)["layout"]["title"]["text"] == before["layout"]["title"]["text"]
    assert lines_said not in [c.value for c in at.caption]
