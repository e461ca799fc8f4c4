"""The Heads page under AppTest: statistics table, chart per metric, rollout and flow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
from streamlit.testing.v1 import AppTest

from helpers.apptest import open_bundled, open_on


def open_page(model_dir: Path, **params: str) -> AppTest:
    return open_on(model_dir, "heads", **{"text": "bad cafe", **params})


def specs(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(e.proto.spec) for e in at.get("plotly_chart")]


def shown_cells(element: Any) -> pd.DataFrame:
    """A dataframe element's cells as the browser draws them (the Styler's display values)."""
    stream = element.proto.arrow_data.styler.display_values
    return pa.ipc.open_stream(stream).read_all().to_pandas()


def test_default_render_has_table_chart_and_rollout(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    assert not at.exception and not at.error
    stats = at.dataframe[0].value
    assert len(stats) == 3 * 2 * 2  # kinds × layers × heads of the tiny model
    assert {"entropy", "tag"} <= set(stats.columns)
    cells = shown_cells(at.dataframe[0])
    assert cells["entropy"].str.fullmatch(r"\d\.\d{4}").all(), "shown to 4 decimals"
    assert len(specs(at)) == 2


def test_the_table_never_prints_none_and_gives_tags_room(tiny_model_dir: Path) -> None:
    """The issue: a literal 'None' where a statistic has no meaning, and tags cut short."""
    at = open_page(tiny_model_dir)
    cells = shown_cells(at.dataframe[0])
    assert not cells.isin(["None", "nan", "NaN", "<NA>"]).any().any()
    cross = cells[cells["kind"] == "cross"]
    assert (cross["mean_distance"] == "–").all()  # no meaning for cross-attention: a dash
    assert at.dataframe[0].value["mean_distance"].isna().sum() == len(cross)  # data keeps NaN
    assert at.dataframe[0].proto.placeholder == "–"  # how the browser draws a missing value
    config = json.loads(at.dataframe[0].proto.columns)
    assert config["tag"]["width"] == "large"


def test_the_chosen_statistic_is_in_the_link(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    at.selectbox(key="w_metric").select("first").run()
    assert at.query_params["metric"] == "first"
    shared = open_page(tiny_model_dir, metric="first")
    assert shared.selectbox(key="w_metric").value == "first"
    assert specs(shared)[0]["layout"]["title"]["text"].endswith("first")
    odd = open_page(tiny_model_dir, metric="no-such-statistic")
    assert not odd.exception and odd.selectbox(key="w_metric").value == "entropy"


def test_metric_and_method_change_the_figures(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    chart_before, rollout_before = specs(at)
    assert "mean_distance" not in at.selectbox(key="w_metric").options  # NaN on cross-attention
    at.selectbox(key="w_metric").select("first").run()
    assert specs(at)[0]["data"] != chart_before["data"]
    at.selectbox(key="w_kind").select("decoder_self").run()
    at.selectbox(key="w_metric").select("mean_distance").run()
    assert specs(at)[0]["layout"]["title"]["text"].endswith("mean_distance")
    at.radio(key="w_method").set_value("flow").run()
    assert not at.exception and not at.error
    assert specs(at)[1]["data"] != rollout_before["data"]


def test_query_params_pick_the_kind(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, kind="encoder_self")
    assert at.selectbox(key="w_kind").value == "encoder_self"


def test_bad_input_gives_a_message(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, text="abcdefgh" * 4)
    assert not at.exception
    assert any("at most" in e.value for e in at.error)


def test_task_models_get_an_aligned_column_and_alignment_heads() -> None:
    at = open_bundled("heads", "reverse", kind="cross")
    assert not at.exception and not at.error
    stats = at.dataframe[0].value
    cross = stats[stats["kind"] == "cross"]
    assert cross["aligned"].max() == 1.0 and "alignment head" in set(cross["tag"])
    assert stats[stats["kind"] != "cross"]["aligned"].isna().all()
    assert "aligned" in at.selectbox(key="w_metric").options
    at.selectbox(key="w_metric").select("aligned").run()
    assert specs(at)[0]["layout"]["title"]["text"].endswith("aligned")
    at.selectbox(key="w_kind").select("encoder_self").run()  # no aligned share there
    assert "aligned" not in at.selectbox(key="w_metric").options and not at.exception


def test_models_without_a_task_have_no_aligned_statistic(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    assert "aligned" not in at.selectbox(key="w_metric").options
    assert at.dataframe[0].value["aligned"].isna().all()
