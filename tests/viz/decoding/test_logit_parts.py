"""The "which heads wrote this token" figure: its heatmaps are the record's heads, its bars the
other parts, its colours centred on 0, its title the token and the logit the parts sum to."""

from __future__ import annotations

import numpy as np

from attnlens.record.attribution import BIASES, LogitAttribution
from attnlens.viz.decoding.logit_parts import LOWERS, RAISES, logit_parts, other_parts


def _record(softcap: float | None = None) -> LogitAttribution:
    rng = np.random.default_rng(1)
    return LogitAttribution(
        model="m", token="Ġcat", position=3, logit=0.75, logprob=-1.5, embeddings=-0.25,
        heads={"decoder_self": rng.normal(size=(3, 4)), "cross": rng.normal(size=(3, 4))},
        mlp=rng.normal(size=3), biases=dict.fromkeys(BIASES, 0.5), frozen="the final norm",
        softcap=softcap, uncapped=None if softcap is None else 0.8,
    )  # fmt: skip


def test_the_heatmaps_are_the_heads_parts_on_a_scale_centred_on_zero() -> None:
    record = _record()
    fig = logit_parts(record)
    maps = [t for t in fig.data if t.type == "heatmap"]
    assert [np.asarray(m.z).tolist() for m in maps] == [v.tolist() for v in record.heads.values()]
    reach = max(float(np.abs(v).max()) for v in record.heads.values())
    assert all(m.zmin == -reach and m.zmax == reach for m in maps)
    assert [m.showscale for m in maps] == [True, False]  # one colour bar for both


def test_the_bars_are_every_other_part_and_with_the_heads_sum_to_the_logit() -> None:
    record = _record()
    bars = next(t for t in fig_data(record) if t.type == "bar")
    table = other_parts(record)
    assert list(bars.y) == list(table["part"]) and np.allclose(bars.x, table["value"])
    not_heads = table[~table["part"].str.startswith("all ")]["value"].sum()
    heads = sum(v.sum() for v in record.heads.values())
    assert np.isclose(not_heads + heads, record.total)
    colours = list(bars.marker.color)
    assert all(c == (RAISES if v >= 0 else LOWERS) for c, v in zip(colours, bars.x, strict=True))


def fig_data(record: LogitAttribution) -> tuple:
    return tuple(logit_parts(record).data)


def test_the_title_names_the_token_as_shown_and_the_logit() -> None:
    fig = logit_parts(_record(), token=" cat")
    assert "' cat'" in fig.layout.title.text and "+0.7500" in fig.layout.title.text
    assert "the final norm" in fig.layout.title.subtitle.text
    capped = logit_parts(_record(softcap=30.0)).layout.title.text
    assert "+0.8000 before the cap" in capped
