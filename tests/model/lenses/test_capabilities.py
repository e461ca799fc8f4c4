"""What a lens says it can do is what it does: every capability the plain data claims answers,
every one it denies refuses with an InputError (so a front end asks, and never has to catch)."""

from __future__ import annotations

import functools

import pytest
import torch

from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.registry import load
from attnlens.record.errors import InputError
from helpers.hf_zoo import zoo_folder

BUNDLED = ("reverse", "translate", "lm", "induction")
ZOO = ("bert", "gpt2", "bart")


@functools.cache
def lens_of(name: str) -> Lens:
    if name in ZOO:
        return HFLens(zoo_folder(name), torch.device("cpu"), name=name)
    return load(name, "cpu")


@pytest.mark.parametrize("name", BUNDLED + ZOO)
def test_the_kinds_are_the_records_and_the_default_is_one_of_them(name: str) -> None:
    lens = lens_of(name)
    can = lens.capabilities
    assert can.kinds == lens.trace(lens.example).kinds
    assert can.default_kind in can.kinds
    assert can.default_kind == ("cross" if "cross" in can.kinds else lens.info.self_kind)
    assert can.takes_target == ("cross" in can.kinds)


@pytest.mark.parametrize("name", BUNDLED + ZOO)
def test_each_capability_claimed_answers_and_each_denied_refuses(name: str) -> None:
    lens = lens_of(name)
    can = lens.capabilities
    tr = lens.trace(lens.example)
    checks = {
        "step_by_step": lambda: lens.head_projections(tr, can.default_kind, 0, 0),
        "token_runs": lambda: lens.token_ids(lens.example),
        "evaluates": lambda: lens.evaluate(2, 0),
        "decodes": lambda: lens.decode(lens.example, max_len=2),
    }
    for field, call in checks.items():
        if getattr(can, field):
            call()
        else:
            with pytest.raises(InputError):
                call()
    assert can.snapshots == bool(lens.snapshots())
    assert can.ablates == (lens.why_no_ablation() is None)
    assert can.task == lens.task_name
    assert can.reads_pairs == lens.reads_pairs


def test_what_the_bundled_models_and_a_hugging_face_model_can_do() -> None:
    reverse, lm, bert = (lens_of(n).capabilities for n in ("reverse", "lm", "bert"))
    assert reverse.task == "reverse" and reverse.snapshots and reverse.step_by_step
    assert reverse.kinds == ("encoder_self", "decoder_self", "cross") and reverse.takes_target
    assert lm.kinds == ("decoder_self",) and lm.decodes and not lm.takes_target
    assert not bert.decodes and not bert.step_by_step and not bert.snapshots
    assert bert.reads_pairs and bert.token_runs and bert.kinds == ("encoder_self",)
