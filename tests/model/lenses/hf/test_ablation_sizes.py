"""Heads to ablate are checked against the sizes of their own kind: on a Hugging Face
encoder-decoder whose encoder and decoder differ in depth (as distilbart's), a decoder or cross
head is checked against the decoder's layers and an encoder head against the encoder's."""

from __future__ import annotations

from pathlib import Path

import pytest
import transformers as T

import attnlens
from attnlens.record.errors import InputError
from helpers.hf_models import BUILDERS


@pytest.fixture(scope="module", params=[(2, 1), (1, 2)], ids=["shallow decoder", "deep decoder"])
def bart(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, tok = BUILDERS["bart"]()
    encoder, decoder = request.param
    sizes = {"encoder_layers": encoder, "decoder_layers": decoder}
    config = T.BartConfig(**{**model.config.to_dict(), **sizes})
    folder = tmp_path_factory.mktemp("bart")
    T.BartForConditionalGeneration(config).eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def test_each_kind_of_head_is_checked_against_its_own_layers(bart: Path) -> None:
    lens = attnlens.load(str(bart), device="cpu")
    encoder, decoder = lens.info.shape("encoder_self")[0], lens.info.shape("cross")[0]
    deeper, shallower = (
        ("encoder_self", "cross") if encoder > decoder else ("cross", "encoder_self")
    )
    with pytest.raises(InputError, match=rf"{shallower}:1\.0 does not exist: .* layers 0-0"):
        lens.decode("ab", max_len=3, ablate=[f"{shallower}:1.0"])
    run = lens.decode("ab", max_len=3, ablate=[f"{deeper}:1.0", "decoder_self:0.1"])
    assert len(run.to_frame()) > 0
