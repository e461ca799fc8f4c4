"""How tables are shown: text made visible whatever dtype pandas gives it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from attnlens.app.web.show import readable


def test_a_token_that_is_a_space_shows_as_a_visible_mark_in_every_text_column() -> None:
    """Decode's candidates table showed the space a character model chose first as an empty
    cell: pandas 3 holds text as `str`, which the check for `object` columns passed over."""
    frame = pd.DataFrame({"rank": [1, 2], "token": [" ", "s"], "probability": [0.7, 0.1]})
    mixed = pd.DataFrame({"token": pd.Series([" ", None, 3], dtype=object)})
    assert readable(frame).data["token"].tolist() == ["␣", "s"]
    assert readable(mixed).data["token"].tolist()[::2] == ["␣", 3]  # not text: left alone
    assert readable(frame).data["probability"].tolist() == [0.7, 0.1]
    assert frame["token"].tolist() == [" ", "s"]  # the data itself (its CSV) is unchanged
    assert np.isnan(readable(pd.DataFrame({"x": [np.nan]})).data["x"].iloc[0])


def test_on_a_projector_a_short_table_is_drawn_as_large_html_text() -> None:
    """A data grid draws 14 px text on its canvas whatever the page's type: on a projector
    Decode's candidates and the what-if table stayed small. Long tables keep the grid."""

    def page() -> None:
        import pandas as pd
        import streamlit as st

        from attnlens.app.web import show

        st.session_state["_present"] = st.query_params.get("present") == "1"
        show.table(pd.DataFrame({"token": [" ", "a"], "p": [0.5, 0.25]}), "short", "short")
        show.table(pd.DataFrame({"n": range(show.PROJECTED_ROWS + 1)}), "long", "long")

    screen = AppTest.from_function(page).run()
    assert len(screen.dataframe) == 2 and not screen.table
    at = AppTest.from_function(page)
    at.query_params["present"] = "1"
    at.run()
    assert len(at.table) == 1 and len(at.dataframe) == 1 and not at.exception
    assert at.table[0].value["token"].tolist() == ["␣", "a"]


def test_on_a_projector_no_toolbar_floats_over_a_chart() -> None:
    """Plotly's toolbar showed over the token sets' grid and profile whenever the pointer
    passed: in presentation mode a chart has none (a drag still zooms); on a screen it does."""

    def page() -> None:
        import plotly.graph_objects as go
        import streamlit as st

        from attnlens.app.web import show

        st.session_state["_present"] = st.query_params.get("present") == "1"
        show.figure(go.Figure(go.Bar(y=[1, 2])), "chart", "chart")

    configs = {}
    for present in ("0", "1"):
        at = AppTest.from_function(page)
        at.query_params["present"] = present
        at.run()
        chart = at.get("plotly_chart")[0].proto
        configs[present] = json.loads(chart.config)
    assert configs["1"].get("displayModeBar") is False
    assert "displayModeBar" not in configs["0"]
