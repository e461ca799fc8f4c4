"""The attribution record (record/attribution.py): plain data that reads back exactly from JSON,
whose parts sum to its total, one row per part in its long table."""

from __future__ import annotations

import numpy as np
import pytest

from attnlens.record.attribution import BIASES, LogitAttribution


def _record() -> LogitAttribution:
    rng = np.random.default_rng(0)
    return LogitAttribution(
        model="m", token="cat", position=4, logit=1.25, logprob=-2.5, embeddings=0.5,
        heads={"decoder_self": rng.normal(size=(2, 3)), "cross": rng.normal(size=(2, 3))},
        mlp=rng.normal(size=2), biases=dict.fromkeys(BIASES, 0.125), frozen="the final norm",
        tokens=("<s>", "the", "cat"),
    )  # fmt: skip


def test_the_total_is_the_sum_of_every_part() -> None:
    r = _record()
    parts = r.embeddings + r.heads["decoder_self"].sum() + r.heads["cross"].sum() + r.mlp.sum()
    assert r.total == pytest.approx(parts + 3 * 0.125, abs=1e-12)


def test_it_reads_back_exactly_from_json() -> None:
    r = _record()
    back = LogitAttribution.from_json(r.to_json())
    assert back.to_dict() == r.to_dict()
    assert np.array_equal(back.heads["cross"], r.heads["cross"]) and back.total == r.total


def test_one_row_per_part() -> None:
    frame = _record().to_frame()
    assert len(frame) == 1 + 2 * 6 + 2 + len(BIASES)
    assert frame["value"].sum() == pytest.approx(_record().total, abs=1e-12)
    head = frame[(frame["part"] == "head") & (frame["kind"] == "cross")].iloc[4]
    assert (head["layer"], head["head"]) == (1, 1)
    assert head["value"] == _record().heads["cross"][1, 1]


def test_another_record_is_refused_by_its_schema() -> None:
    with pytest.raises(ValueError, match=r"attnlens\.attribution/1"):
        LogitAttribution.from_dict({"schema": "attnlens.trace/1"})


def test_a_capped_logit_keeps_what_its_parts_sum_to() -> None:
    """Gemma 2 caps its logits: the record keeps the cap and the logit before it (`summed`);
    a record without a cap writes neither."""
    r = _record()
    capped = LogitAttribution.from_dict(r.to_dict() | {"softcap": 30.0, "uncapped": 1.3})
    assert (capped.softcap, capped.summed, r.summed) == (30.0, 1.3, r.logit)
    assert LogitAttribution.from_json(capped.to_json()).to_dict() == capped.to_dict()
    assert "softcap" not in r.to_dict()
