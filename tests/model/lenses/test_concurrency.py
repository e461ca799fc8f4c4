"""One loaded model shared by many threads: every result equals the same call made alone."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from attnlens import Lens, load

TEXTS = ["abc", "hgfe", "a", "bad cafe", "ggg", "ha ha", "cabbage", "edge"]


def calls(lens: Lens) -> list[Callable[[], str]]:
    """Trace and decode calls on different inputs, each returning its JSON record."""
    out: list[Callable[[], str]] = []
    for i, text in enumerate(TEXTS):
        out.append(lambda t=text: lens.trace(t).to_json())
        out.append(lambda t=text: lens.trace(t, target=t[::-1]).to_json())
        out.append(
            lambda t=text, s=i: lens.decode(t, strategy="sample", seed=s, max_len=8).to_json()
        )
        out.append(lambda t=text: lens.decode(t, strategy="beam", beam_size=3, max_len=8).to_json())
    return out


def test_eight_threads_see_only_their_own_results(tiny_model_dir: Path) -> None:
    lens = load(str(tiny_model_dir), device="cpu")
    work = calls(lens)
    alone = [call() for call in work]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(3):
            together = list(pool.map(lambda call: call(), work * 2))
            assert together == alone * 2
