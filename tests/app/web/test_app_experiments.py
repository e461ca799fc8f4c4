"""The Experiments page under AppTest: each experiment runs under a progress bar, then shows its
figure, table and downloads; a second visit reads it from the cache. The Heads page shows the
induction heads of a decoder."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from helpers.apptest import chart, open_on, titles


def run(folder: Path, experiment: str, n: int, **params: str) -> AppTest:
    at = open_on(folder, "experiments", experiment=experiment, **params)
    assert not at.exception
    at.number_input(key=f"w_n_{experiment}").set_value(n).run()
    assert any("press Run" in i.value for i in at.info)
    at.button(key="w_run_experiment").click().run(timeout=120)
    assert not at.exception and not at.error
    return at


def captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


def test_induction_runs_then_is_read_from_the_cache(hand_lm_dir: Path) -> None:
    at = run(hand_lm_dir, "induction", 4, text="abcabc")
    assert "computed in" in captions(at)
    shown = titles(at)
    assert any("look back one after the match" in t for t in shown)
    assert any(t.startswith("induction heads") for t in shown)
    heads = at.dataframe[-1].value
    assert {"layer", "head", "induction", "previous_token"} <= set(heads.columns)
    definition = " ".join(m.value for e in at.expander for m in e.markdown)
    assert "P+1 … P+2b−1" in definition and "Olsson et al. 2022" in definition  # stated exactly
    support = " ".join(c.value for e in at.expander for c in e.caption)
    assert "llama" in support and "ALBERT" in support  # which models can silence heads
    again = open_on(hand_lm_dir, "experiments", experiment="induction")
    again.number_input(key="w_n_induction").set_value(4).run()
    assert "read from the cache" in captions(again) and not again.exception


@pytest.mark.parametrize(
    ("experiment", "model", "expect"),
    [("importance", "REV", "pruning heads"), ("explanation", "LM", "is attention an explanation"),
     ("explanation", "REV", "is attention an explanation"),
     ("alignment", "REV", "cross-attention heads against the true alignment")],
)  # fmt: skip
def test_each_experiment_draws_its_figure(
    experiment: str, model: str, expect: str, hand_lm_dir: Path, hand_reverse_dir: Path
) -> None:
    folder = hand_lm_dir if model == "LM" else hand_reverse_dir
    at = run(folder, experiment, 3, text="abcab")
    assert any(t.startswith(expect) for t in titles(at)), titles(at)
    buttons: list[Any] = at.get("download_button")
    assert len(buttons) >= 2  # the heads as CSV, the record as JSON (and each figure)


@pytest.mark.parametrize(
    ("experiment", "model", "message"),
    [("alignment", "LM", "no known alignment"), ("induction", "REV", "reads one sequence")],
)
def test_an_experiment_that_does_not_apply_says_why_before_any_run(
    experiment: str, model: str, message: str, hand_lm_dir: Path, hand_reverse_dir: Path
) -> None:
    folder = hand_lm_dir if model == "LM" else hand_reverse_dir
    at = open_on(folder, "experiments", experiment=experiment)
    assert not at.exception and any(message in i.value for i in at.info)
    assert not at.button and not at.number_input  # nothing to run


def test_the_page_opens_on_an_experiment_that_applies_to_the_model(
    hand_lm_dir: Path, hand_reverse_dir: Path
) -> None:
    on_reverse = open_on(hand_reverse_dir, "experiments")
    assert (
        on_reverse.selectbox(key="w_experiment").value == "importance"
    )  # induction needs one sequence
    assert not on_reverse.exception
    assert not any("reads one sequence" in i.value for i in on_reverse.info)
    assert open_on(hand_lm_dir, "experiments").selectbox(key="w_experiment").value == "induction"


def test_the_heads_page_shows_a_decoders_induction_heads(hand_lm_dir: Path) -> None:
    at = open_on(hand_lm_dir, "heads", text="abcdabcd")
    assert not at.exception and not at.error
    assert any("look back one after the match" in t for t in titles(at))
    assert any(h.value == "Induction heads" for h in at.header)
    line = next(m.value for m in at.markdown if "random blocks of tokens said twice" in m.value)
    line = line.replace("\\", "")  # the scores are on those blocks, the figure on this input
    assert line.startswith("On 100 random blocks") and line.endswith(
        "the same two heads on this input."
    )


def test_the_heads_page_measures_induction_s_scores_alone_once_and_keeps_them(
    hand_lm_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 49: the Heads page ran the whole experiment, every head ablated in turn (200 s on
    GPT-2 small's shape, nothing on screen meanwhile); it now measures the scores alone (one
    run of the inputs), kept in the experiment cache for any session and after a restart; the
    whole result, once the Experiments page has it, is shown instead."""
    import attnlens
    from attnlens.analysis.experiments import catalog
    from attnlens.analysis.experiments.induction import NOT_ASKED

    ablated: list[object] = []
    real = catalog.measure_induction

    def counting(*args: object, **kwargs: object) -> object:
        ablated.append(kwargs.get("ablation", True))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog, "measure_induction", counting)
    at = open_on(hand_lm_dir, "heads", text="abcdabcd")
    assert not at.exception and ablated == [False]
    lens = attnlens.load(str(hand_lm_dir))
    light = catalog.peek(lens, "induction", 100, 0, scores_only=True)
    assert light is not None and any(NOT_ASKED in note for note in light.result.notes)
    assert catalog.peek(lens, "induction", 100, 0) is None  # never taken for the whole
    again = open_on(hand_lm_dir, "heads", text="abcdabcd")  # another session, a new process's
    assert not again.exception and ablated == [False]  # the cache answered
    whole = catalog.run_experiment(lens, "induction", 100, 0)  # the Experiments page's
    assert not whole.cached and not any(NOT_ASKED in note for note in whole.result.notes)
    first = catalog.peek(lens, "induction", 100, 0, scores_only=True)
    assert first is not None and not any(NOT_ASKED in note for note in first.result.notes)


def test_the_heads_page_sends_the_induction_progress_before_any_figure(
    hand_lm_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 49: on a model never measured the statistics chart and rollout were sent before
    the induction run's progress bar, and the browser's first Plotly figure held the bar back
    for seconds; now the run starts right after the table, and the charts are drawn after it
    in their place above the section."""
    import attnlens.viz
    from attnlens.analysis.experiments import catalog

    order: list[str] = []
    real_run, real_chart = catalog.measure_induction, attnlens.viz.head_stats_chart

    def run(*args: Any, **kwargs: Any) -> Any:
        order.append("induction run")
        return real_run(*args, **kwargs)

    def chart(*args: Any, **kwargs: Any) -> Any:
        order.append("statistics chart")
        return real_chart(*args, **kwargs)

    monkeypatch.setattr(catalog, "measure_induction", run)
    monkeypatch.setattr(attnlens.viz, "head_stats_chart", chart)
    at = open_on(hand_lm_dir, "heads", text="abcdabcd")
    assert not at.exception and order == ["induction run", "statistics chart"]
    shown = [e for e in at.main if e.type in ("header", "plotly_chart")]
    kinds = [e.value if e.type == "header" else "figure" for e in shown]
    induction = kinds.index("Induction heads")
    assert kinds[:induction] == ["Statistics and tags", "figure", "Rollout and flow across "
                                 "layers", "figure"]  # fmt: skip
    assert kinds[induction + 1 :] == ["figure", "figure"]  # its two heads, every head


def test_the_heads_page_of_an_encoder_decoder_has_no_induction_section(
    tiny_model_dir: Path,
) -> None:
    at = open_on(tiny_model_dir, "heads", text="bad cafe")
    assert not at.exception and all(h.value != "Induction heads" for h in at.header)


@pytest.mark.parametrize(("kind", "score"), [("gpt2", "log-likelihood"), ("bert", "similarity")])
def test_importance_and_pruning_run_on_a_hugging_face_model(kind: str, score: str) -> None:
    from helpers.hf_models import tiny_hf

    at = run(tiny_hf(kind), "importance", 3)
    shown = titles(at)
    assert any(t.startswith("pruning heads") for t in shown), shown
    curve = chart(at, "pruning heads")  # drawn against the score the heads were measured by
    assert score in curve["layout"]["yaxis"]["title"]["text"]
    heads = next(d.value for d in at.dataframe if "importance" in d.value.columns)
    assert len(heads) == 4 and heads["importance"].notna().all()
    notes = " ".join(i.value for i in at.info)
    assert ("cosine similarity" in notes) == (kind == "bert") and "only Voita" not in notes


def plain(text: str) -> str:
    """Text as a visitor reads it (md's escapes and word joiners gone)."""
    return text.replace("\\", "").replace("\u2060", "")


@pytest.fixture
def on_a_server(monkeypatch: pytest.MonkeyPatch, hand_lm_dir: Path) -> Path:
    """Server mode (ATTNLENS_SERVER_MODE=1) with the hand-built decoder allowed."""
    monkeypatch.setenv("ATTNLENS_SERVER_MODE", "1")
    monkeypatch.setenv("ATTNLENS_ALLOWED_MODELS", str(hand_lm_dir))
    return hand_lm_dir


def test_on_a_server_n_over_the_bound_is_refused_in_one_line_before_any_run(
    on_a_server: Path,
) -> None:
    at = open_on(on_a_server, "experiments", experiment="induction")
    at.number_input(key="w_n_induction").set_value(500).run()
    assert not at.exception and not at.error
    lines = [plain(i.value) for i in at.info]
    assert any("n=500" in line and "at most 100" in line for line in lines), lines
    assert all(b.key != "w_run_experiment" for b in at.button)


def test_off_a_server_n_is_not_bounded(hand_lm_dir: Path) -> None:
    at = open_on(hand_lm_dir, "experiments", experiment="induction")
    at.number_input(key="w_n_induction").set_value(500).run()
    assert any("press Run" in i.value for i in at.info)


def test_on_a_server_a_cached_result_is_shown_whatever_its_n(
    on_a_server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ATTNLENS_SERVER_MODE")
    run(on_a_server, "induction", 4, text="abcabc")  # cached off the server
    monkeypatch.setenv("ATTNLENS_SERVER_MODE", "1")
    monkeypatch.setenv("ATTNLENS_EXPERIMENT_MAX_N", "2")
    again = open_on(on_a_server, "experiments", experiment="induction", text="abcabc")
    again.number_input(key="w_n_induction").set_value(4).run()
    assert "read from the cache" in captions(again) and not again.exception
    assert not any("at most 2" in plain(i.value) for i in again.info)


def test_on_a_server_a_session_starts_one_experiment_per_interval(on_a_server: Path) -> None:
    at = run(on_a_server, "induction", 4, text="abcabc")
    assert "computed in" in captions(at)
    at.number_input(key="w_n_induction").set_value(3).run()
    at.button(key="w_run_experiment").click().run()
    lines = [plain(i.value) for i in at.info]
    assert any("every 60 s" in line and "can start in" in line for line in lines), lines
    assert "computed in" not in captions(at)


@contextlib.contextmanager
def another_run_for_a_while(seen: list[int]) -> Iterator[None]:
    """Another visitor's experiment holds the server's one turn until the page has joined the
    line (seen gets how many waited then) and a second more, then ends."""
    from attnlens.app.web.experiments.turns import experiment_queue

    queue = experiment_queue()  # the server's one line, as the page finds it
    held = queue.join()

    def let_go_once_queued() -> None:
        deadline = time.monotonic() + 60
        while queue.waiting() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        seen.append(queue.waiting())
        time.sleep(1.2)  # the page shows its place meanwhile
        queue.leave(held)

    helper = threading.Thread(target=let_go_once_queued)
    helper.start()
    try:
        yield
    finally:
        queue.leave(held)
        helper.join()
    assert queue.waiting() == 0


def test_on_a_server_a_second_experiment_waits_its_turn_and_is_told_its_place(
    on_a_server: Path,
) -> None:
    seen: list[int] = []
    with another_run_for_a_while(seen):
        at = run(on_a_server, "induction", 4, text="abcabc")
    assert seen == [1]  # it waited behind the running one, then ran
    assert re.search(r"Waited \d+ s for a turn \(1 ahead\)", plain(captions(at))), captions(at)
    assert "computed in" in captions(at)


def test_on_a_server_the_heads_pages_induction_heads_wait_their_turn_too(
    on_a_server: Path,
) -> None:
    seen: list[int] = []
    with another_run_for_a_while(seen):
        at = open_on(on_a_server, "heads", text="abcdabcd")
    assert seen == [1] and not at.exception and not at.error
    assert any("look back one after the match" in t for t in titles(at))
