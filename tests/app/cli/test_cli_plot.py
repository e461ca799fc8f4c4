"""`attnlens plot`: every view to Plotly JSON, HTML that opens offline, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnlens.app.cli.plot import DECODE_VIEWS, VIEWS
from helpers import cli

MODEL = "reverse"
TEXT = "abca"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return cli.run(["plot", MODEL, TEXT, "--device", "cpu", *args], capsys)


ONE_TEXT_VIEWS = sorted(v for v in [*VIEWS, *DECODE_VIEWS] if v != "pair")  # pairs: test_cli_edges


@pytest.mark.parametrize("view", ONE_TEXT_VIEWS)
def test_every_view_writes_plotly_json(
    view: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / f"{view}.json"
    code, _, err = run(["--view", view, "--out", str(out)], capsys)
    assert code == 0, err
    fig = json.loads(out.read_text())
    assert fig["data"] and fig["layout"]["title"]


def test_json_goes_to_standard_output_and_tokens_stay_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["--view", "heatmap", "--kind", "encoder", "--layer", "0"], capsys)
    assert code == 0
    data = json.loads(out)["data"]
    assert data[0]["x"] == ["0 · a", "1 · b", "2 · c", "3 · a", "4 · &lt;/s&gt;"]
    assert "encoder self-attention · layer 0 · head 0" in json.loads(out)["layout"]["title"]["text"]


def test_html_is_self_contained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "model.html"
    assert run(["--view", "model", "--kind", "decoder", "--out", str(out)], capsys)[0] == 0
    old, new = tmp_path / "old.json", tmp_path / "new.json"  # the records' name, and the older
    assert run(["--view", "model", "--kind", "decoder", "--out", str(old)], capsys)[0] == 0
    assert run(["--view", "model", "--kind", "decoder_self", "--out", str(new)], capsys)[0] == 0
    assert old.read_text() == new.read_text()
    html = out.read_text()
    assert "<script src=" not in html  # plotly.js is inlined: the page opens offline
    assert "Plotly.newPlot" in html and "DecompressionStream" in html
    assert 1_000_000 < len(html) < 2_500_000  # gzipped: Plotly's own page took 4.9 MB


def test_static_image_or_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "heat.png"
    code, _, err = run(["--view", "heatmap", "--out", str(out)], capsys)
    if code == 0:
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert code == 2 and err.count("\n") == 1 and "cannot write heat.png" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--view", "nope"], "invalid choice: 'nope'"),
        (["--view", "heatmap", "--layer", "99"], "layer 99 is outside"),
        (["--view", "lines", "--head", "-1"], "head -1 is outside"),
        (["--view", "heatmap", "--out", "x.txt"], "--out must end in"),
        (["--view", "alignment", "--kind", "encoder"], "takes --kind cross, got encoder_self"),
        (
            ["--view", "rollout", "--kind", "cross"],
            "takes --kind encoder_self, decoder_self, got cross",
        ),
        (["--view", "heatmap", "--kind", "both"], "invalid choice: 'both'"),
        (["--view", "candidates", "--step", "999"], "step 999 is outside"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(args, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert message in err and "Traceback" not in err


def test_the_norm_measure_is_drawn_and_named(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["--view", "heatmap", "--measure", "norm"], capsys)
    assert code == 0, err
    assert "norm α‖f(x)‖" in json.loads(out)["layout"]["title"]["text"]
    code, _, err = run(["--view", "lines", "--measure", "norm"], capsys)
    assert code != 0 and "--measure norm draws the heatmap view" in err
