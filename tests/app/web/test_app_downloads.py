"""Downloads in the app: made when clicked, piece by piece on disk, handed to Streamlit once;
the CSV is the head shown unless every head is asked for; a file above the budget is refused
with its size; large files travel gzip-compressed."""

from __future__ import annotations

import gzip
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import streamlit

from attnlens.app.web import downloads
from attnlens.model.lenses.registry import load
from attnlens.record.export import json_bound
from attnlens.record.trace import Trace
from helpers.apptest import open_bundled, open_on


@pytest.fixture
def clicked(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    """Every download button the page draws, by key, with the arguments it was given."""
    seen: dict[str, dict[str, Any]] = {}
    real: Callable[..., Any] = streamlit.download_button

    def recording(label: str, data: Any, **kwargs: Any) -> Any:
        seen[str(kwargs.get("key"))] = {"label": label, "data": data, **kwargs}
        return real(label, b"", **{k: v for k, v in kwargs.items() if k != "on_click"})

    monkeypatch.setattr(streamlit, "download_button", recording)
    return seen


def content(button: dict[str, Any]) -> bytes:
    """What the browser receives when the button is clicked."""
    reader = button["data"]()
    try:
        return bytes(reader.read())
    finally:
        reader.close()


def test_the_table_is_the_head_shown_and_the_record_is_the_trace(
    tiny_model_dir: Path, clicked: dict[str, dict[str, Any]]
) -> None:
    at = open_on(tiny_model_dir, "explore", text="abc", kind="cross", layer="1", head="0")
    assert not at.exception
    tr = load(str(tiny_model_dir), device="cpu").trace("abc")
    table = clicked["trace_csv"]
    assert table["file_name"] == "cross-layer1-head0-trace.csv" and not table["disabled"]
    assert content(table).decode() == tr.to_frame("cross", 1, 0).to_csv(index=False)
    assert content(clicked["trace_json"]).decode() == tr.to_json()
    assert Trace.from_npz(content(clicked["trace_npz"])).equals(tr)
    at.toggle(key="w_csv_all").set_value(True).run()
    every = clicked["trace_csv"]
    assert every["file_name"] == "trace.csv"
    assert content(every).decode() == tr.to_frame().to_csv(index=False)
    html = content(clicked["heatmap_download"])
    assert html.lower().startswith(b"<!doctype html>") and b"plotly" in html
    lines = content(clicked["lines_download"])  # its figure is built only now, when clicked
    assert lines.lower().startswith(b"<!doctype html>") and b"cross-attention" in lines
    assert lines.count(b'"mode":"lines"') >= 1


def test_a_file_over_the_budget_is_refused_with_its_size(
    tiny_model_dir: Path, clicked: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    tr = load(str(tiny_model_dir), device="cpu").trace("abcdefgh")
    one, every = tr.csv_bound("encoder_self", 0, 0), tr.csv_bound()
    limit = 2 * one * downloads.SERVED_COPIES  # one head's table fits, every head's does not
    assert every * downloads.SERVED_COPIES > limit
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", str(limit / 2**20))
    at = open_on(tiny_model_dir, "explore", text="abcdefgh", kind="encoder_self")
    assert not clicked["trace_csv"]["disabled"]
    at.toggle(key="w_csv_all").set_value(True).run()
    every = clicked["trace_csv"]
    assert every["disabled"] and every["data"] == b""
    notes = [c.value for c in at.caption if "above the limit" in c.value]
    assert notes and "KB" in notes[0] and "ATTNLENS" in notes[0], [c.value for c in at.caption]


def test_a_file_is_offered_only_when_sending_it_fits_the_budget() -> None:
    limit = downloads.export_limit()
    assert downloads.too_large(limit // downloads.SERVED_COPIES) is None
    refused = downloads.too_large(limit // downloads.SERVED_COPIES + 1, "Use the NPZ.")
    assert refused and f"{downloads.SERVED_COPIES} times" in refused
    assert refused.endswith("Use the NPZ.")


def test_a_record_too_large_to_send_as_json_is_offered_as_npz(
    tiny_model_dir: Path, clicked: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "abcdefgh"
    tr = load(str(tiny_model_dir), device="cpu").trace(text)
    json_size, npz_size = json_bound(tr.json_tree()), tr.npz_bound()
    assert npz_size < json_size
    between = (json_size + npz_size) / 2 * downloads.SERVED_COPIES
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", str(between / 2**20))
    at = open_on(tiny_model_dir, "explore", text=text)
    assert clicked["trace_json"]["disabled"] and not clicked["trace_npz"]["disabled"]
    notes = [c.value for c in at.caption if "JSON" in c.value and "limit" in c.value]
    assert notes and "as NPZ" in notes[0] and "attnlens trace" in notes[0], notes
    assert Trace.from_npz(content(clicked["trace_npz"])).equals(tr)


def test_large_files_are_sent_gzip_compressed(
    tiny_model_dir: Path, clicked: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(downloads, "PLAIN_BYTES", 100)
    open_on(tiny_model_dir, "explore", text="abc")
    record = clicked["trace_json"]
    assert record["file_name"] == "trace.json.gz" and record["mime"] == "application/gzip"
    tr = load(str(tiny_model_dir), device="cpu").trace("abc")
    assert gzip.decompress(content(record)).decode() == tr.to_json()
    npz = clicked["trace_npz"]  # a zip already: sent as it is
    assert npz["file_name"] == "trace.npz" and npz["mime"] == "application/zip"
    assert Trace.from_npz(content(npz)).equals(tr)


def test_a_spooled_file_is_read_once_and_leaves_nothing_on_disk(tmp_path: Path) -> None:
    written: list[str] = []

    def write(handle: Any) -> None:
        handle.write(b"a" * 1000)
        written.append(getattr(handle.inner, "name", ""))

    reader = downloads.spooled(write, 1000)()
    assert isinstance(reader, io.BufferedReader) and reader.read() == b"a" * 1000
    reader.close()
    assert written and not Path(written[0]).exists()
    too_big = downloads.spooled(write, 999)
    with pytest.raises(downloads.ExportTooLargeError):
        too_big()
    assert not Path(written[-1]).exists()


def test_figures_are_named_by_kind_layer_and_head_and_compressed_only_over_16_mb(
    tiny_model_dir: Path, clicked: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38: head 3's PNG was `cross-attention-decoder-encoder-layer-0.png` (Plotly's
    camera, named from the title), and a 22 KB SVG came as `.svg.gz` (its bound was 64 MB)."""
    monkeypatch.setattr("attnlens.app.web.show.can_export_images", lambda: True)
    at = open_on(tiny_model_dir, "explore", text="abc", kind="cross", layer="1", head="0")
    assert not at.exception
    names = {k: (v["file_name"], v["mime"]) for k, v in clicked.items()}
    assert names["heatmap_download"] == ("cross-layer1-head0.html", "text/html")
    assert names["heatmap_png"] == ("cross-layer1-head0.png", "image/png")
    assert names["heatmap_svg"] == ("cross-layer1-head0.svg", "image/svg+xml")
    assert names["lines_svg"] == ("cross-layer1-head0-lines.svg", "image/svg+xml")
    (chart,) = [c for c in at.get("plotly_chart") if c.proto.id and "heatmap" in c.proto.id]
    assert "toImage" in json.loads(chart.proto.config)["modeBarButtonsToRemove"]  # no camera
    at = open_on(tiny_model_dir, "decode", text="bad cafe")
    assert clicked["step_attention_png"]["file_name"] == "cross-layer1-head0-step0.png"


HEAD_NAMED = re.compile(
    r"^(encoder_self|decoder_self|cross)-layer\d+(-head\d+|-mean)?(-[a-z0-9-]+)?\.\w+$"
)
KIND_NAMED = re.compile(r"^(encoder_self|decoder_self|cross)-[a-z0-9_-]+\.\w+$")


@pytest.mark.parametrize(
    ("page", "model", "params"),
    [
        ("explore", None, {"kind": "cross", "layer": "1", "head": "0"}),
        ("inside", None, {"kind": "cross", "layer": "1", "head": "0"}),
        ("heads", None, {}),
        ("decode", None, {"strategy": "beam", "beam_size": "2", "max_len": "4"}),
        ("training", "translate", {"kind": "cross", "layer": "1", "head": "0"}),
    ],
)
def test_one_naming_rule_on_every_page(
    page: str, model: str | None, params: dict[str, str], tiny_model_dir: Path,
    clicked: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Issue 49: Explore named a head's files `cross-layer1-head0`, while Training, Inside and
    Heads still wrote `step-N-kind-L-H` (and Decode `step-N-attention-…`): every file that
    shows one head now starts with its kind, layer and head, what it shows after them; a
    file of one kind starts with the kind."""
    monkeypatch.setattr("attnlens.app.web.show.can_export_images", lambda: True)
    if model is None:
        at = open_on(tiny_model_dir, page, text="bad cafe", **params)
    else:
        at = open_bundled(page, model, **params)
    assert not at.exception
    names = [str(v["file_name"]) for v in clicked.values()]
    about_heads = [n for n in names if re.search(r"(layer\d|head\d|\d-\d)", n)]
    assert about_heads, names
    for name in about_heads:
        assert HEAD_NAMED.match(name), name
    for name in names:
        if re.match(r"^(encoder_self|decoder_self|cross)", name):
            assert HEAD_NAMED.match(name) or KIND_NAMED.match(name), name


def test_the_compression_rule_is_the_documented_16_mb() -> None:
    assert downloads.PLAIN_BYTES == 16 * 2**20  # docs/app.md#downloads says 16 MB
    heatmap = downloads.image_bound(200_000, "svg", 1100, 760)  # measured: a 44 KB SVG
    assert 44_000 < heatmap < downloads.PLAIN_BYTES
    assert downloads.image_bound(200_000, "png", 1100, 760) < downloads.PLAIN_BYTES
    assert "image/png" in downloads.COMPRESSED  # gzip makes a PNG no smaller: never .png.gz


@pytest.mark.parametrize(
    ("bound", "mime", "name"),
    [
        (16 * 2**20, "image/svg+xml", "f.svg"),
        (16 * 2**20 + 1, "image/svg+xml", "f.svg.gz"),
        (40 * 2**20, "image/png", "f.png"),
    ],
)
def test_a_file_is_gzipped_only_when_it_may_pass_16_mb(
    bound: int, mime: str, name: str, clicked: dict[str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("ATTNLENS_MAX_RECORD_MB", "1000")
    downloads.button("x", lambda h: None, bound, "f.svg" if "svg" in name else "f.png", mime, "k")
    assert clicked["k"]["file_name"] == name


def test_a_heatmap_past_the_vector_limit_offers_its_png_and_says_why_not_an_svg(
    tmp_path: Path, clicked: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An SVG draws heatmap cells as vectors up to VECTOR_CELLS (docs/app.md, Downloads): the
    positional table of a 512-position input holds 270k cells with its similarity panel."""
    from attnlens.viz.shared.vector_cells import VECTOR_CELLS
    from helpers.long_gpt2 import long_gpt2, words

    monkeypatch.setattr("attnlens.app.web.show.can_export_images", lambda: True)
    at = open_on(long_gpt2(tmp_path), "inside", text=words(511), timeout=120)
    assert not at.exception
    svg, png = clicked["positional_svg"], clicked["positional_png"]
    assert svg["disabled"] and f"at most {VECTOR_CELLS:,} as vectors" in svg["help"]
    assert not png["disabled"]
    captions = " ".join(c.value for c in at.caption).replace("\\", "").replace("\u2060", "")
    assert "SVG: a heatmap of" in captions and "the PNG holds them all" in captions
    assert not clicked["masks_svg"]["disabled"]  # in blocks: 3 × 64² cells
