"""Head importance and pruning (Michel et al.; Voita et al.) on hand-built models: a head that
writes nothing is worth exactly nothing, an exact previous-token head is fully confident, and
the batched scores agree with the one decoding loop and with teacher-forced traces."""

from __future__ import annotations

import numpy as np
import pytest

from attnlens.analysis.experiments.importance import measure_importance, prunable
from attnlens.model.decoding.heads import HeadRef
from attnlens.model.lenses.lens import Lens
from attnlens.model.training.tasks import get_task
from attnlens.record.errors import InputError
from helpers.handbuilt import PREVIOUS, SILENT
from helpers.parts import ablation, runs, samples, task


def test_a_silent_head_has_importance_zero_and_an_exact_head_confidence_one(
    hand_lm: Lens,
) -> None:
    result = measure_importance(hand_lm, n=6, seed=0)
    for layer, head in SILENT:
        assert result.score("importance", "decoder_self", layer, head) == pytest.approx(0, abs=1e-6)
    assert result.score("confidence", "decoder_self", *PREVIOUS) == pytest.approx(1.0, abs=1e-6)
    assert abs(result.score("importance", "decoder_self", *PREVIOUS)) > 1e-4
    curve = result.tables["pruning"]
    assert curve["loglik"].iloc[0] == pytest.approx(result.summary["loglik"])
    silent = {f"decoder_self:{layer}.{head}" for layer, head in SILENT}
    steps = [k for k in range(1, len(curve)) if curve["removed"].iloc[k] in silent]
    assert len(steps) == 2  # removing a silent head leaves the score as it was
    for k in steps:
        assert curve["loglik"].iloc[k] == pytest.approx(curve["loglik"].iloc[k - 1], abs=1e-6)
    ranks = result.heads.set_index(["layer", "head"])["prune_rank"]
    assert sorted(ranks) == list(range(4))
    assert result.tables["pruning_by_kind"].empty  # one kind of attention only


def test_task_scores_agree_with_the_decoding_loop_and_the_trace(hand_reverse: Lens) -> None:
    examples = get_task("reverse").examples(12, seed=5)
    ablate = [HeadRef("cross", 1, 0)]
    greedy = task(hand_reverse).task_scores(examples, ablate, "greedy")
    looped = [
        hand_reverse.decode(e.source, ablate=["cross:1.0"], max_len=len(e.target) + 2).output_text
        == e.target
        for e in examples
    ]
    assert greedy.exact.tolist() == looped
    plain = task(hand_reverse).task_scores(examples)
    for e, loglik in zip(examples, plain.loglik, strict=True):
        traced = hand_reverse.trace(e.source, e.target).tgt_logprobs
        assert traced is not None and loglik == pytest.approx(float(traced.sum()), abs=1e-4)


def test_task_model_importance_has_exact_drops_and_curves_per_kind(hand_reverse: Lens) -> None:
    result = measure_importance(hand_reverse, n=10, seed=0, beam=True)
    for kind, layer, head in (("cross", 1, 1), ("encoder_self", 0, 1)):  # silent heads
        assert result.score("importance", kind, layer, head) == pytest.approx(0, abs=1e-6)
        assert result.score("exact_drop", kind, layer, head) == 0.0
    curve, by_kind = result.tables["pruning"], result.tables["pruning_by_kind"]
    assert len(curve) == 1 + 3 * 2 * 2 and curve["exact_beam"].notna().all()  # kinds×layers×heads
    kinds = {"encoder_self", "decoder_self", "cross"}  # as the records name them, everywhere
    assert set(result.heads["kind"]) == set(by_kind["kind"]) == kinds
    assert {name.split(":")[0] for name in curve["removed"].iloc[1:]} == kinds
    assert set(result.summary["exact_all_of_kind_removed"]) == kinds  # type: ignore[arg-type]
    assert result.summary["prunable_greedy"] == prunable(curve, "exact_greedy")


def test_prunable_counts_heads_until_more_than_one_point_is_lost() -> None:
    import pandas as pd

    curve = pd.DataFrame({"exact_greedy": [0.95, 0.96, 0.945, 0.93, 0.99]})
    assert prunable(curve, "exact_greedy") == 2  # 0.93 is 2 points below 0.95
    assert prunable(pd.DataFrame({"exact_greedy": [0.5, 0.5]}), "exact_greedy") == 1


def test_a_model_without_a_score_is_refused(tiny_model_dir: object) -> None:
    from attnlens.model.lenses.registry import load

    with pytest.raises(InputError, match="no score to lose"):
        measure_importance(load(str(tiny_model_dir), device="cpu"), n=4)


def test_ablating_a_head_the_model_lacks_names_the_limits(hand_lm: Lens) -> None:
    from attnlens.model.lenses.token_runs import TokenBatch

    with pytest.raises(InputError, match="does not exist"):
        ablation(hand_lm).run_tokens(
            TokenBatch([runs(hand_lm).token_ids("abc")]), [HeadRef("decoder_self", 5, 0)]
        )
    with pytest.raises(InputError, match="no cross attention"):
        ablation(hand_lm).run_tokens(
            TokenBatch([runs(hand_lm).token_ids("abc")]), [HeadRef("cross", 0, 0)]
        )
    assert np.isfinite(
        runs(hand_lm).run_tokens(TokenBatch([runs(hand_lm).token_ids("abc")])).logprobs
    ).all()


def test_progress_counts_every_scoring_run_up_to_its_total(hand_lm: Lens) -> None:
    calls: list[tuple[int, int, str]] = []
    measure_importance(hand_lm, n=2, seed=0, progress=lambda d, t, w: calls.append((d, t, w)))
    done = [d for d, _, _ in calls]
    assert done == list(range(1, len(calls) + 1))  # one tick per scoring run, none skipped
    assert {t for _, t, _ in calls} == {done[-1]}  # the total was known from the start
    assert calls[0][2] == "scoring the whole model" and "pruning" in calls[-1][2]


# Hugging Face models: heads ablated in a private copy (model/lenses/hf/ablation.py), checked
# against the same model with the head's value projection zeroed (tests/helpers/silenced.py).


def _silenced_models(name: str, heads: list[HeadRef]) -> list[object]:
    from helpers.silenced import loud, values_zeroed

    model = loud(name)[1]
    return [values_zeroed(model, h.kind, h.layer, [h.head]) for h in heads]


def test_a_hugging_face_decoders_importance_is_the_log_likelihood_its_head_carries() -> None:
    import torch

    from attnlens.model.lenses.hf.lens import HFLens
    from helpers.silenced import loud, values_zeroed

    lens = HFLens(loud("gpt2")[0], torch.device("cpu"), name="loud-gpt2")
    result = measure_importance(lens, n=3, seed=0)
    ids = [runs(lens).token_ids(t) for t in samples(lens).sample_texts(3, 0)]

    def loglik(model: object) -> float:  # per token, over the texts, as the experiment counts
        total, count = 0.0, 0
        with torch.no_grad():
            for row in ids:
                logits = model(input_ids=torch.tensor([row])).logits[0]  # type: ignore[operator]
                lp = torch.log_softmax(logits, -1)[:-1].gather(-1, torch.tensor(row[1:])[:, None])
                total, count = total + float(lp.sum()), count + len(row) - 1
        return total / count

    base = loglik(loud("gpt2")[1])
    assert result.summary["loglik"] == pytest.approx(base, abs=1e-5)
    heads = [HeadRef("decoder_self", layer, head) for layer in range(2) for head in range(2)]
    for ref, silent in zip(heads, _silenced_models("gpt2", heads), strict=True):
        want = base - loglik(silent)
        assert result.score("importance", "decoder_self", ref.layer, ref.head) == pytest.approx(
            want, abs=1e-5
        )
    assert result.heads["importance"].abs().max() > 1e-2  # the heads matter: a real test
    silent_all = loud("gpt2")[1]
    for layer in range(2):
        silent_all = values_zeroed(silent_all, "decoder_self", layer, [0, 1])
    assert result.summary["loglik_all_removed"] == pytest.approx(loglik(silent_all), abs=1e-5)
    curve = result.tables["pruning"]
    first = curve["removed"].iloc[1]
    row = result.heads[[str(r) == first for r in heads]]
    assert curve["loglik"].iloc[1] == pytest.approx(base - float(row["importance"].iloc[0]))


def test_a_hugging_face_encoders_importance_is_the_output_similarity_it_costs() -> None:
    import torch

    from attnlens.analysis.experiments.importance import cosine
    from attnlens.model.lenses.hf.lens import HFLens
    from helpers.silenced import loud

    lens = HFLens(loud("bert")[0], torch.device("cpu"), name="loud-bert")
    result = measure_importance(lens, n=3, seed=0)
    ids = [runs(lens).token_ids(t) for t in samples(lens).sample_texts(3, 0)]

    def hidden(model: object) -> list[np.ndarray]:
        with torch.no_grad():
            return [model(input_ids=torch.tensor([r])).last_hidden_state[0].numpy() for r in ids]  # type: ignore[operator]

    whole = hidden(loud("bert")[1])
    heads = [HeadRef("encoder_self", layer, head) for layer in range(2) for head in range(2)]
    for ref, silent in zip(heads, _silenced_models("bert", heads), strict=True):
        kept = np.concatenate([cosine(a, b) for a, b in zip(hidden(silent), whole, strict=True)])
        got = result.score("importance", "encoder_self", ref.layer, ref.head)
        assert got == pytest.approx(1.0 - kept.mean(), abs=1e-5) and got > 1e-3
    assert result.summary["similarity"] == pytest.approx(1.0, abs=1e-9)
    curve = result.tables["pruning"]
    assert len(curve) == 5 and curve["similarity"].iloc[-1] < curve["similarity"].iloc[0]
    assert result.summary["similarity_all_removed"] == curve["similarity"].iloc[-1]
    assert result.tables["pruning_by_kind"].empty and any("cosine" in n for n in result.notes)
