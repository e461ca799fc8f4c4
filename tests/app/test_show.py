"""How tables are shown: text made visible whatever dtype pandas gives it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnlens.app.show import readable


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
