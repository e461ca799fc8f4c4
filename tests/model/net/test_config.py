"""Table 3: the base and big presets come out at the paper's parameter counts."""

from __future__ import annotations

import pytest

from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.transformer import Transformer


def count(config: TransformerConfig) -> int:
    return sum(p.numel() for p in Transformer(config).parameters())  # tied weights count once


@pytest.mark.parametrize(
    ("preset", "paper"), [(TransformerConfig.base, 65e6), (TransformerConfig.big, 213e6)]
)
def test_parameter_count_within_four_percent(preset: object, paper: float) -> None:
    config = preset()  # type: ignore[operator]
    assert config.src_vocab == 37000
    n = count(config)
    assert abs(n - paper) / paper < 0.04, f"{n:,} parameters vs the paper's {paper:,.0f}"


def test_presets_follow_table_3() -> None:
    base, big = TransformerConfig.base(), TransformerConfig.big()
    assert (base.N, base.d_model, base.d_ff, base.h, base.d_k, base.dropout) == (
        6,
        512,
        2048,
        8,
        64,
        0.1,
    )
    assert (big.N, big.d_model, big.d_ff, big.h, big.d_k, big.dropout) == (
        6,
        1024,
        4096,
        16,
        64,
        0.3,
    )


def test_round_trip_and_validation() -> None:
    c = TransformerConfig(10, 10, N=1, d_model=8, d_ff=16, h=2)
    assert TransformerConfig.from_dict(c.to_dict()) == c
    with pytest.raises(ValueError, match="divisible"):
        TransformerConfig(10, 10, d_model=10, h=3)
    with pytest.raises(ValueError, match="one vocabulary"):
        TransformerConfig(10, 12)
    with pytest.raises(ValueError, match="unknown"):
        TransformerConfig.from_dict({**c.to_dict(), "bogus": 1})
