"""The bundled models meet their held-out targets (issue 4) and hold up on the hard suite of what
people type (issue 18), on small fixed samples."""

from __future__ import annotations

import pytest
import torch

from attnlens.model.lenses.registry import BUNDLED_DIR, bundled_models, load
from attnlens.model.net import checkpoint
from attnlens.model.training.evaluate import Evaluation, TaskReport, evaluate, evaluate_task
from attnlens.model.training.tasks import get_task

EXACT = {"reverse": 0.99, "sort": 0.99, "dates": 0.99, "translate": 0.95}
ALIGNED = {"reverse": 0.95, "translate": 0.85}  # best head; tasks without a target are left out
SEED = 31_337  # neither training's stream (its seed) nor its held-out set (10_000 + its seed)
N_EXAMPLES = 300  # small and fast, but 100 would make a 99% target hinge on a single example


def _evaluate(name: str) -> Evaluation:
    folder = BUNDLED_DIR / name
    if not (folder / checkpoint.DESCRIPTION).is_file():
        pytest.skip(f"{name} is not bundled yet")
    net, tok, meta = checkpoint.load(folder, torch.device("cpu"))
    return evaluate(net, tok, get_task(meta["task"]).examples(N_EXAMPLES, seed=SEED))


@pytest.mark.parametrize("name", sorted(EXACT))
def test_bundled_model_meets_its_exact_match_target(name: str) -> None:
    exact = _evaluate(name).exact
    assert exact >= EXACT[name], f"{name}: exact {exact:.2%} < {EXACT[name]:.0%}"


@pytest.mark.parametrize("name", sorted(ALIGNED))
def test_bundled_model_meets_its_alignment_target(name: str) -> None:
    aligned = _evaluate(name).best_alignment
    assert aligned >= ALIGNED[name], f"{name}: best head {aligned:.2%} < {ALIGNED[name]:.0%}"


# Every kind of the hard suite, 200 examples each, at what the bundled models reach (1000 of each
# kind, `attnlens eval MODEL --suite hard`: reverse 99.7%, sort 99.8%, dates 100%, translate
# 99.6%). Issue 18 asks sort for 99% on the suite and on repeats and digits.
HARD = {"sort": 0.99, "reverse": 0.99, "dates": 0.99, "translate": 0.98}
HARD_KINDS = {"sort": {"repeats": 0.99, "digits": 0.99}, "reverse": {"repeats": 0.99}}
HARD_N = 200


def _hard(name: str) -> TaskReport:
    folder = BUNDLED_DIR / name
    if not (folder / checkpoint.DESCRIPTION).is_file():
        pytest.skip(f"{name} is not bundled yet")
    net, tok, meta = checkpoint.load(folder, torch.device("cpu"))
    return evaluate_task(name, net, tok, get_task(meta["task"]), HARD_N, SEED, suite="hard")


@pytest.mark.parametrize("name", sorted(HARD))
def test_bundled_model_holds_up_on_the_hard_suite(name: str) -> None:
    report = _hard(name)
    scores = {k.kind: k.exact for k in report.kinds}
    assert report.exact >= HARD[name], f"{name}: hard suite {report.exact:.2%}, {scores}"
    for kind, target in HARD_KINDS.get(name, {}).items():
        assert scores[kind] >= target, f"{name} on {kind}: {scores[kind]:.2%} < {target:.0%}"


def test_sort_sorts_what_the_issue_saw_it_fail_on() -> None:
    if not (BUNDLED_DIR / "sort" / checkpoint.DESCRIPTION).is_file():
        pytest.skip("sort is not bundled yet")
    lens = load("sort", device="cpu")
    for text in ["554565", "69976763", "220519011", "3141592653", "555-0100", "Mississippi",
                 "aaaaaaaaaaaa", "Hello, World"]:  # fmt: skip
        assert lens.decode(text).output_text == "".join(sorted(text)), text


def test_every_bundled_model_says_what_to_look_for() -> None:
    for entry in bundled_models():
        assert len(entry.description) > 30 and "\n" not in entry.description, entry.name


def test_bundled_weights_stay_under_40_mb() -> None:
    total = sum(p.stat().st_size for p in BUNDLED_DIR.rglob("*") if p.is_file())
    assert total < 40 * 2**20, f"bundled files take {total / 2**20:.1f} MB"


@pytest.mark.parametrize("name", ["reverse", "sort", "dates", "translate"])
def test_snapshots_from_along_training_load(name: str) -> None:
    snapshots = BUNDLED_DIR / name / "snapshots"
    if not (BUNDLED_DIR / name / checkpoint.DESCRIPTION).is_file():
        pytest.skip(f"{name} is not bundled yet")
    steps = sorted(snapshots.iterdir())
    assert len(steps) >= 5
    net, _, _ = checkpoint.load(steps[0], torch.device("cpu"))
    assert next(net.parameters()).dtype == torch.float32


def test_translate_greedy_and_beam_disagree_where_its_description_says() -> None:
    if not (BUNDLED_DIR / "translate" / checkpoint.DESCRIPTION).is_file():
        pytest.skip("translate is not bundled yet")
    lens = load("translate", device="cpu")
    greedy = lens.decode("the cat sees a house")
    beam = lens.decode("the cat sees a house", strategy="beam", beam_size=4)
    assert greedy.output_text == "lo gat vid un ca dom"  # "ca" (0.60) beats "kasa" (0.40)
    assert beam.output_text == "lo gat vid un kasa" and beam.score > greedy.score
