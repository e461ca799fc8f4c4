"""What a lens says it can do is what it does: every part its capabilities hand out answers,
every part it lacks is None with a reason fit to show (so a front end asks, and never has to
catch), and the contract itself raises "not supported" nowhere."""

from __future__ import annotations

import functools
import inspect

import pytest
import torch

from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.lens import WHY_NOT, Capabilities, Lens
from attnlens.model.lenses.registry import load
from attnlens.model.lenses.token_runs import TokenBatch
from attnlens.record.errors import InputError
from helpers.hf_zoo import zoo_folder

BUNDLED = ("reverse", "translate", "lm", "induction")
ZOO = ("bert", "gpt2", "bart")
PARTS = [p for p in WHY_NOT if p != "decode"]


@functools.cache
def lens_of(name: str) -> Lens:
    if name in ZOO:
        return HFLens(zoo_folder(name), torch.device("cpu"), name=name)
    return load(name, "cpu")


@pytest.mark.parametrize("name", BUNDLED + ZOO)
def test_the_kinds_are_the_records_and_the_default_is_one_of_them(name: str) -> None:
    lens = lens_of(name)
    can = lens.capabilities
    tr = lens.trace(lens.example)
    assert can.kinds == tr.kinds and can.self_kind == tr.self_kind
    assert can.default_kind in can.kinds
    assert can.default_kind == ("cross" if "cross" in can.kinds else lens.info.self_kind)
    assert can.takes_target == ("cross" in can.kinds)
    assert tr.input_tokens == (tr.src_tokens if "encoder_self" in tr.kinds else tr.tgt_tokens)


def calls(lens: Lens, can: Capabilities) -> dict[str, object]:
    """One call of each part the model has."""
    tr = lens.trace(lens.example)
    out: dict[str, object] = {}
    if can.predictor is not None:
        out["predictor"] = can.predictor.next_tokens(lens.example, 2)
    if can.projections is not None:
        out["projections"] = can.projections.head_projections(tr, can.default_kind, 0, 0)
    if can.task is not None:
        out["task"] = can.task.reference(lens.example)
    if can.evaluation is not None:
        out["evaluation"] = can.evaluation.evaluate(2, 0)
    if can.training is not None:
        out["training"] = can.training.snapshots()
    if can.token_runs is not None:
        out["token_runs"] = can.token_runs.token_ids(lens.example)
    if can.ablation is not None and can.token_runs is not None:
        ids = can.token_runs.token_ids(lens.example)
        batch = TokenBatch([ids]) if not can.takes_target else TokenBatch([ids[:2]], [ids])
        out["ablation"] = can.ablation.run_ablations(batch, [[]])
    if can.samples is not None:
        out["samples"] = can.samples.sample_texts(2, 0)
    if can.attribution is not None:
        out["attribution"] = can.attribution.at_step(lens.decode(lens.example, max_len=2), 0)
    return out


@pytest.mark.parametrize("name", BUNDLED + ZOO)
def test_each_part_handed_out_answers_and_each_missing_one_says_why(name: str) -> None:
    lens = lens_of(name)
    can = lens.capabilities
    answered = calls(lens, can)
    for part in PARTS:
        if getattr(can, part) is not None:
            assert part in answered and can.reason(part) == ""
        else:
            reason = can.reason(part)
            assert reason.strip() and "\n" not in reason and len(reason) < 400, (part, reason)
    if can.training is not None:
        assert answered["training"], "a training part has snapshots"
    if can.decodes:
        lens.decode(lens.example, max_len=2)
    else:
        assert "writes none" in can.reason("decode")
        with pytest.raises(InputError, match="does not generate text"):
            lens.decode(lens.example, max_len=2)


def test_what_the_bundled_models_and_a_hugging_face_model_can_do() -> None:
    reverse, lm, induction, bert, gpt2 = (
        lens_of(n).capabilities for n in ("reverse", "lm", "induction", "bert", "gpt2")
    )
    assert reverse.task is not None and reverse.task.name == "reverse"
    assert reverse.training is not None and reverse.projections is not None
    assert reverse.kinds == ("encoder_self", "decoder_self", "cross") and reverse.takes_target
    assert reverse.predictor is None and not reverse.reads_pairs
    assert lm.kinds == ("decoder_self",) and lm.decodes and not lm.takes_target
    assert lm.predictor is not None and lm.evaluation is not None and lm.task is None
    assert induction.evaluation is None and "copy losses" in induction.reason("evaluation")
    assert not bert.decodes and bert.projections is None and bert.training is None
    assert bert.reads_pairs and bert.token_runs is not None and bert.kinds == ("encoder_self",)
    assert bert.predictor is None and gpt2.predictor is not None
    assert bert.attribution is None and None not in (lm.attribution, gpt2.attribution)


def test_the_contract_raises_not_supported_nowhere() -> None:
    """Every method of the contract is abstract or does its work: none of its bodies refuses
    by default (a lens that lacks a part hands out None instead)."""
    for name, member in vars(Lens).items():
        function = member.fget if isinstance(member, property) else member
        if not inspect.isfunction(function) or getattr(member, "__isabstractmethod__", False):
            continue
        body = inspect.getsource(function)
        assert "raise InputError" not in body, name
    public = [n for n in vars(Lens) if not n.startswith("_")]
    assert len(public) <= 14, public  # the core a newcomer reads in one screen
