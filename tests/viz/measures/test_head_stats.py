"""Head statistics of known synthetic patterns."""

from __future__ import annotations

import numpy as np
import pytest

from attnlens.analysis import head_statistics
from attnlens.record.picking import earlier_matches
from attnlens.record.trace import Trace
from attnlens.viz import head_stats_chart


def _tags(synth: type, offset: int) -> list[str]:
    tr = synth.make_trace(
        src=("a", "b", "c", "d", "</s>"), L=2, H=2, encoder_self=synth.pattern(2, 2, 5, offset)
    )
    stats = head_statistics(tr, ["encoder_self"])
    return list(stats["tag"])


def test_pure_diagonal_is_a_self_head(synth: type) -> None:
    assert _tags(synth, 0) == ["self head"] * 4


def test_pure_previous_token_is_a_previous_token_head(synth: type) -> None:
    assert _tags(synth, 1) == ["previous-token head"] * 4


def test_all_to_first_and_all_to_end_are_tagged(synth: type) -> None:
    w = np.zeros((1, 2, 5, 5), dtype=np.float32)
    w[0, 0, :, 0] = 1.0
    w[0, 1, :, 4] = 1.0
    tr = synth.make_trace(src=("a", "b", "c", "d", "</s>"), L=1, H=2, encoder_self=w)
    stats = head_statistics(tr, ["encoder_self"])
    assert list(stats["tag"]) == ["first-token head", "end-token head"]
    assert stats.loc[0, "mean_distance"] == pytest.approx((0 + 1 + 2 + 3 + 4) / 5)
    assert stats.loc[0, "entropy"] == pytest.approx(0.0)


def test_uniform_attention_has_log_entropy_and_no_tag(synth: type) -> None:
    w = np.full((1, 1, 4, 4), 0.25, dtype=np.float32)
    tr = synth.make_trace(src=("a", "a", "b", "c"), L=1, H=1, encoder_self=w)
    row = head_statistics(tr, ["encoder_self"]).iloc[0]
    assert row["entropy"] == pytest.approx(np.log(4))
    assert row["self"] == pytest.approx(0.25) and row["tag"] == ""
    assert np.isnan(row["end"])  # no end token in this input


def test_one_row_per_kind_layer_head_and_cross_has_no_self(trace: Trace) -> None:
    stats = head_statistics(trace)
    assert len(stats) == 3 * 2 * 3
    assert list(stats.columns[:3]) == ["kind", "layer", "head"]
    cross = stats[stats["kind"] == "cross"]
    assert cross["self"].isna().all() and cross["first"].notna().all()


def test_chart_is_layers_by_heads_with_tags(synth: type) -> None:
    tr = synth.make_trace(src=("a", "b", "c"), L=2, H=3, encoder_self=synth.pattern(2, 3, 3, 1))
    fig = head_stats_chart(head_statistics(tr), "encoder_self", "previous")
    assert fig.data[0].z.shape == (2, 3)
    assert fig.data[0].customdata[1][2] == "previous-token head"
    assert fig.data[0].text[0][0] == "previous-token"
    with pytest.raises(ValueError, match="metric"):
        head_stats_chart(head_statistics(tr), "encoder_self", "nonsense")


def test_aligned_share_and_tag_come_from_the_reference(synth: type) -> None:
    cross = np.zeros((1, 2, 3, 4), dtype=np.float32)  # (L, H, T, S)
    cross[0, 0, [0, 1, 2], [2, 0, 3]] = 1.0  # head 0: true sources 2, 0 (then </s> at 3)
    cross[0, 1, :, 1] = 1.0  # head 1: always source 1
    tr = synth.make_trace(L=1, H=2, cross=cross)
    stats = head_statistics(tr, ["cross", "encoder_self"], reference=(2, 0))
    cross_rows = stats[stats["kind"] == "cross"].set_index("head")
    assert cross_rows.loc[0, "aligned"] == 1.0 and cross_rows.loc[1, "aligned"] == 0.0
    assert (
        cross_rows.loc[0, "tag"] == "alignment head"
        and cross_rows.loc[1, "tag"] != "alignment head"
    )
    assert stats[stats["kind"] == "encoder_self"]["aligned"].isna().all()
    assert head_statistics(tr, ["cross"])["aligned"].isna().all()  # no reference, no share
    assert head_stats_chart(stats, "cross", "aligned").data[0].z.tolist() == [[1.0, 0.0]]
    with pytest.raises(ValueError, match="does not fit"):
        head_statistics(tr, ["cross"], reference=(7,))


def test_a_head_that_looks_after_the_earlier_match_is_an_induction_head(synth: type) -> None:
    tokens = ("<s>", *"xyzwxyzw")
    T = len(tokens)
    w = np.zeros((1, 2, T, T), dtype=np.float32)
    w[0, 0] = np.eye(T, k=-1)  # previous token
    w[0, 0, 0, 0] = 1.0
    w[0, 1] = w[0, 0]
    matches = earlier_matches(tokens)  # the second copy looks after its first copy
    queries, keys = [q for q, _ in matches], [j + 1 for _, j in matches]
    w[0, 1, queries] = 0.0
    w[0, 1, queries, keys] = 1.0
    tr = synth.make_trace(tgt=tokens, L=1, H=2, decoder_self=w)
    stats = head_statistics(tr, ["decoder_self"])
    assert list(stats["tag"]) == ["previous-token head", "induction head"]
    assert stats["induction"].tolist() == [0.0, 1.0]
    once = synth.make_trace(tgt=("<s>", *"xyzw"), L=1, H=2, decoder_self=w[..., :5, :5])
    assert head_statistics(once, ["decoder_self"])["induction"].isna().all()  # no repeat


def test_the_bundled_induction_model_shows_its_heads_on_a_block_typed_twice() -> None:
    """What the README tells a user to try: its heads 0.2 and 1.0 are tagged on the page."""
    import attnlens

    stats = head_statistics(attnlens.load("induction").trace("k3x9mq2wz7k3x9mq2wz7"))
    tags = {(r.layer, r.head): r.tag for r in stats.itertuples()}
    assert tags[(0, 2)] == "previous-token head" and tags[(1, 0)] == "induction head"
    assert stats.set_index(["layer", "head"]).loc[(1, 0), "induction"] > 0.9
