"""Sets of ablated heads side by side (`run_ablations`, `task_scores_many`) give what each set
gives alone (`run_tokens`, `task_scores`): our models with a head mask per row (the source
encoded once for the sets that ablate no encoder head), Hugging Face models in one private copy
whose output projections change from set to set."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlens.model.decoding.heads import HeadRef
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.token_runs import TokenBatch, TokenRun
from attnlens.model.training.tasks import get_task
from helpers.parts import ablation, runs, task


def assert_runs_equal(many: list[TokenRun], alone: list[TokenRun]) -> None:
    assert len(many) == len(alone)
    for a, b in zip(many, alone, strict=True):
        assert a.encoder_self is None and a.decoder_self is None and a.cross is None
        for field in ("logprobs", "hidden"):
            x, y = getattr(a, field), getattr(b, field)
            assert (x is None) == (y is None)
            if x is not None:
                np.testing.assert_allclose(x, y, rtol=0, atol=1e-6)
        if a.top is not None:
            assert b.top is not None and (a.top == b.top).all()


def sets_of(lens: Lens) -> list[list[HeadRef]]:
    kinds = lens.info.kinds
    one = [
        [HeadRef(kind, layer, head)] for kind in kinds for layer in range(2) for head in range(2)
    ]
    return [[], *one, [h for s in one for h in s]]


def test_our_decoders_ablations_side_by_side_are_each_as_alone(hand_lm: Lens) -> None:
    ids = [runs(hand_lm).token_ids(t) for t in ("abc abc", "a", "hello there")]
    sets = sets_of(hand_lm)
    alone = [ablation(hand_lm).run_tokens(TokenBatch(ids), s) for s in sets]
    assert_runs_equal(ablation(hand_lm).run_ablations(TokenBatch(ids), sets), alone)
    assert alone[1].logprobs is not None and alone[0].logprobs is not None
    assert not np.allclose(np.nan_to_num(alone[1].logprobs), np.nan_to_num(alone[0].logprobs))


def test_our_task_models_ablations_side_by_side_are_each_as_alone(hand_reverse: Lens) -> None:
    examples = get_task("reverse").examples(9, seed=4)
    space = runs(hand_reverse).token_space()
    assert space.start is not None
    tokens = [(space.start, *runs(hand_reverse).token_ids(e.target)) for e in examples]
    batch = TokenBatch(tokens, [runs(hand_reverse).token_ids(e.source) for e in examples])
    sets = sets_of(hand_reverse)
    alone = [ablation(hand_reverse).run_tokens(batch, s) for s in sets]
    assert_runs_equal(ablation(hand_reverse).run_ablations(batch, sets), alone)
    for search in ("greedy", "beam"):
        many = task(hand_reverse).task_scores_many(examples, sets, search)
        for got, s in zip(many, sets, strict=True):
            want = task(hand_reverse).task_scores(examples, s, search)
            assert (got.exact == want.exact).all() and (got.tokens == want.tokens).all()
            np.testing.assert_allclose(got.loglik, want.loglik, rtol=0, atol=1e-5)


@pytest.mark.parametrize("name", ["gpt2", "bert", "bart"])
def test_a_hugging_face_models_ablations_in_one_copy_are_each_as_alone(name: str) -> None:
    from attnlens.model.lenses.hf.lens import HFLens
    from helpers.silenced import loud

    lens = HFLens(loud(name)[0], torch.device("cpu"), name=f"loud-{name}")
    before = {k: v.clone() for k, v in lens.model.state_dict().items()}  # type: ignore[attr-defined]
    ids = [runs(lens).token_ids(t) for t in ("the cat sat", "a dog", "why not here")]
    space = runs(lens).token_space()
    batch = (
        TokenBatch([(space.start, *i[:3]) for i in ids], ids)
        if space.start is not None
        else TokenBatch(ids)
    )
    sets = sets_of(lens)
    alone = [ablation(lens).run_tokens(batch, s) for s in sets]
    assert_runs_equal(ablation(lens).run_ablations(batch, sets), alone)
    after = lens.model.state_dict()  # type: ignore[attr-defined]
    assert all(torch.equal(before[k], after[k]) for k in before)  # the shared model as it was
