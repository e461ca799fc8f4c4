"""The Decode page under AppTest: steps move, strategies compare, what-if re-decodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

from attnlens.app.web.decode.controls import VIEWS
from attnlens.app.web.decode.step_view import step_of
from helpers.apptest import chart, open_bundled, open_on, require_bundled, step_views


def open_page(model_dir: Path, **params: str) -> AppTest:
    return open_on(model_dir, "decode", **{"text": "bad cafe", **params})


def shown(at: AppTest) -> dict[str, Any]:
    """The step the browser is told to show: the payload's step, and that step's entry."""
    (view,) = step_views(at)
    return {**view["steps"][view["step"]], "step": view["step"], "view": view}


def test_default_render_shows_step_zero(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    assert not at.exception and not at.error
    step = shown(at)
    assert step["step"] == 0
    assert step["attention"]["title"].startswith("step 0: what the new position attends to")
    assert step["candidates"]["title"].startswith("step 0 · candidates of live beam 0")
    assert chart(at, "up to step 0").get("data")
    candidates = at.dataframe[0].value
    assert list(candidates.columns) == ["rank", "token", "probability"]
    assert candidates["probability"].is_monotonic_decreasing


def test_every_step_goes_to_the_browser_and_the_step_it_reports_redraws_the_rest(
    tiny_model_dir: Path,
) -> None:
    """The page moves the step itself (◀ / ▶ and the slider, in the browser); the step it
    reports (st.session_state["w_step"], set by its callback) redraws the table, the tree and
    the URL, while the page is not told to move (its `moved` stays: a rerun for an older
    step does not pull the slider back)."""
    at = open_page(tiny_model_dir)
    before = shown(at)["view"]
    assert len(before["steps"]) == 23  # greedy on the tiny model: max_len 23
    assert len(before["steps"][2]["attention"]["panels"][1]["weights"]) == 3  # <s>, 2 tokens
    at.session_state["w_step"] = 2
    at.run()
    after = shown(at)
    assert after["step"] == 2 and after["view"]["moved"] == before["moved"]
    assert chart(at, "up to step 2") and at.query_params["step"] == "2"
    table = [round(p, 5) for p in at.dataframe[0].value["probability"]]
    assert table == after["candidates"]["probs"]


def test_the_step_a_page_reports_is_checked() -> None:
    good = [{"step": 0, "sent": 1}, {"step": 4, "sent": 2}]
    bad = [{"step": 5}, {"step": -1}, {"step": True}, {"step": 2.0}, {"step": "2"}, 2, None, {}]
    assert [step_of(v, 5) for v in good] == [0, 4]
    assert [step_of(v, 5) for v in bad] == [None] * len(bad)


def test_layer_and_head_change_the_attention(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    before = shown(at)["attention"]["panels"][0]["weights"]
    at.selectbox(key="w_head").select(1).run()
    after = shown(at)["attention"]
    assert after["title"].endswith("head 1") and after["panels"][0]["weights"] != before


def test_greedy_beam_and_sampling_side_by_side(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, strategy="beam", view="versus")
    scores = {m.label: float(m.value) for m in at.metric}
    assert list(scores) == ["greedy", "beam (k=4)", "sample (seed 0)"]
    assert all(score <= 0.0 for score in scores.values())  # sums of log-probabilities
    table = next(d.value for d in at.dataframe if "run" in d.value.columns)
    assert list(table["run"]) == list(scores)
    assert abs(table["score"].iloc[0] - scores["greedy"]) < 1e-3
    looked = [chart(at, name) for name in scores]  # what one head looked at, per run
    assert all(f["data"][0]["type"] == "heatmap" for f in looked)
    z_before = looked[0]["data"][0]["z"]
    at.selectbox(key="w_vs_head").select(1).run()
    assert chart(at, "greedy")["data"][0]["z"] != z_before
    at.number_input(key="w_seed").set_value(7).run()
    assert [m.label for m in at.metric][2] == "sample (seed 7)" and not at.exception


def test_a_decoder_only_model_says_why_side_by_side_has_no_looked_at_heatmaps() -> None:
    at = open_bundled("decode", "lm", view="versus")
    assert not at.exception and not at.error and len(at.metric) == 3
    assert any("lm is decoder-only and has none" in c.value.replace("\\", "") for c in at.caption)
    assert "w_vs_layer" not in at.session_state  # no layer or head to pick


def test_forcing_a_token_changes_the_output(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    first = at.dataframe[0].value["token"].iloc[0]
    forced = "h" if first != "h" else "g"
    at.session_state["w_view"] = VIEWS["what-if"]
    at.run()
    at.text_input(key="w_force_token").input(forced).run()
    assert not at.exception and not at.error
    change = next(d.value for d in at.dataframe if "changed" in d.value.columns)
    assert change["after"].iloc[0] == forced and bool(change["changed"].iloc[0])


def test_ablating_heads_re_decodes(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, view="what-if")
    assert "llama" in str(at.multiselect(key="w_ablate").help)  # which models can silence heads
    at.multiselect(key="w_ablate").select("cross:0.0").select("cross:1.1").run()
    assert not at.exception and not at.error
    assert any(t.value.startswith("After:") for t in at.text)


def test_ablating_heads_of_a_hugging_face_model_re_decodes() -> None:
    from helpers.hf_models import tiny_hf

    at = open_on(tiny_hf("gpt2"), "decode", text="the cat sat", view="what-if")
    assert not at.exception and not at.error
    assert "decoder_self:1.1" in at.multiselect(key="w_ablate").options
    at.multiselect(key="w_ablate").select("decoder_self:1.1").run()
    assert not at.exception and not at.error
    assert any(t.value.startswith("After:") for t in at.text)
    assert at.query_params["ablate"] == "decoder_self:1.1"  # a shared link replays it


def test_a_model_whose_heads_cannot_be_ablated_says_why_and_decodes_without(
    tmp_path: Path,
) -> None:
    import transformers as T

    from helpers.hf_zoo import ROTARY_DECODER, _ids, tokenizer

    tok = tokenizer("llama")  # OLMo: a decoder attnlens reads, its W^O not in ablation.py's list
    T.OlmoForCausalLM(T.OlmoConfig(**{**ROTARY_DECODER, **_ids(tok)})).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    at = open_on(tmp_path, "decode", text="the cat sat", ablate="decoder_self:1.1")
    assert not at.exception and not at.error
    box = at.multiselect(key="w_ablate")
    assert box.disabled and not box.options and "olmo" in str(box.help)
    assert "architectures: " in str(box.help)  # and which ones can
    assert any(i.value.startswith("Not ablated") and "olmo" in i.value for i in at.info)


def test_bad_input_gives_messages(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, view="what-if")
    at.text_input(key="w_force_token").input("z").run()
    assert not at.exception
    assert any("not in the model's vocabulary" in e.value.replace("\\", "") for e in at.error)
    at.text_input(key="w_text").input("").run()
    assert not at.exception
    assert any("empty" in e.value for e in at.error)


def test_query_params_restore_strategy_and_step(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, strategy="greedy", step="1", layer="0", head="1")
    assert not at.exception and not at.error
    assert at.selectbox(key="w_strategy").value == "greedy"
    step = shown(at)
    assert step["step"] == 1 and step["attention"]["title"].endswith("layer 0 · head 1")


def test_a_decoder_only_model_decodes_by_default_and_room_follows_the_prompt() -> None:
    """The prompt of a decoder-only model takes positions from the output: the default max
    length is what is left, and a longer prompt lowers a setting that no longer fits."""
    at = open_bundled("decode", "lm", strategy="sample")
    assert not at.exception and not at.error
    room = at.number_input(key="w_max_len").value
    assert room == 128 - 1 - len("The return statement")  # 128 positions: <s>, the prompt
    at.text_input(key="w_text").input("x" * 100).run()
    assert at.number_input(key="w_max_len").value == 128 - 101 and not at.error


def test_the_max_length_follows_the_models_own_default_unless_the_user_set_one() -> None:
    """translate's 63 stayed when lm (107 for its example) was picked."""
    require_bundled("lm")
    at = open_bundled("decode", "translate", strategy="beam")
    assert at.number_input(key="w_max_len").value == 63
    at.selectbox(key="w_model_choice").select("lm").run()
    assert not at.exception and not at.error
    assert at.number_input(key="w_max_len").value == 128 - 1 - len("The return statement")
    at.number_input(key="w_max_len").set_value(40).run()  # the user's own: kept
    at.selectbox(key="w_model_choice").select("translate").run()
    assert at.number_input(key="w_max_len").value == 40


def test_the_step_through_follows_the_output_then_any_beam_the_link_names() -> None:
    """The issue: translate, beam 4, last step read 'lo gat vid un ca dom manja' (a beam that
    lost) while the output is 'lo gat vid un kasa'."""
    at = open_bundled("decode", "translate", strategy="beam", beam_size="4", step="6")
    assert not at.exception and not at.error
    step = shown(at)
    assert step["view"]["whose"] == "the output's path"
    assert step["tokens"] == "lo gat vid un kasa </s>" and "finished at step 5" in step["note"]
    assert "follow" not in at.query_params
    at = open_bundled("decode", "translate", strategy="beam", beam_size="4", step="6",
                      follow="6.0")  # fmt: skip
    step = shown(at)
    assert step["view"]["whose"] == "the beam you follow (step 6, beam 0; orange in the tree)"
    assert step["tokens"] == "lo gat vid un ca dom manja" and not step["note"]
    assert step["attention"]["title"].startswith("step 6:") and at.query_params["follow"] == "6.0"
    tree = chart(at, "up to step 6")
    assert any(t["name"] == "followed beam" for t in tree["data"])
    at.button(key="follow_output").click().run()
    assert "follow" not in at.query_params
    assert shown(at)["tokens"] == "lo gat vid un kasa </s>"


def test_a_node_the_run_lacks_falls_back_to_the_output(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, strategy="beam", follow="99.3")
    assert not at.exception and not at.error
    assert shown(at)["view"]["whose"] == "the output's path"


def test_a_shared_link_carries_the_settings_forced_token_and_ablated_heads(
    tiny_model_dir: Path,
) -> None:
    """The issue: a link must reopen the same run, what-if included. Set by hand, read back
    from the URL, and opened again from that URL alone."""
    at = open_page(tiny_model_dir, strategy="beam", view="what-if")
    at.number_input(key="w_beam_size").set_value(3).run()
    at.number_input(key="w_force_step").set_value(1).run()
    at.text_input(key="w_force_token").input("h").run()
    at.multiselect(key="w_ablate").select("cross:0.0").run()
    assert not at.exception and not at.error
    link = {k: at.query_params[k] for k in at.query_params if k != "page"}
    assert link["beam_size"] == "3" and link["force"] == "1=h" and link["ablate"] == "cross:0.0"
    assert link.pop("view") == "what-if"  # a link that forces or ablates opens there anyway
    after = [t.value for t in at.text if t.value.startswith("After:")]
    assert after
    again = open_on(tiny_model_dir, "decode", **link)
    assert not again.exception and not again.error
    assert again.number_input(key="w_beam_size").value == 3
    forced = again.number_input(key="w_force_step"), again.text_input(key="w_force_token")
    assert (forced[0].value, forced[1].value) == (1, "h")
    assert again.multiselect(key="w_ablate").value == ["cross:0.0"]
    assert [t.value for t in again.text if t.value.startswith("After:")] == after


def test_a_link_naming_heads_the_older_way_replays_the_same_run(tiny_model_dir: Path) -> None:
    """Links shared before the kinds took the records' names say `decoder:1.0`."""
    new = open_page(tiny_model_dir, view="what-if", ablate="decoder_self:1.0")
    old = open_page(tiny_model_dir, view="what-if", ablate="decoder:1.0")
    for at in (new, old):
        assert not at.exception and not at.error
        assert at.multiselect(key="w_ablate").value == ["decoder_self:1.0"]
        assert at.query_params["ablate"] == "decoder_self:1.0"  # the link now says it the new way
    after = [[t.value for t in at.text if t.value.startswith("After:")] for at in (new, old)]
    assert after[0] and after[0] == after[1]


def test_only_the_open_view_is_drawn_and_the_url_keeps_it(tiny_model_dir: Path) -> None:
    """Every rerun renders the page's whole element tree again in the browser: the step
    slider waited for the comparison's and what-if's 40-odd elements below it. Each view is a
    tab, drawn only when open, and a link reopens the same one."""
    at = open_page(tiny_model_dir, strategy="beam")
    assert at.query_params["view"] == "steps"
    assert step_views(at) and not at.metric and not at.multiselect
    at.session_state["w_view"] = VIEWS["versus"]
    at.run()
    assert [m.label for m in at.metric] == ["greedy", "beam (k=4)", "sample (seed 0)"]
    assert not step_views(at) and not at.multiselect and at.query_params["view"] == "versus"
    again = open_page(tiny_model_dir, strategy="beam", view="versus")
    assert [m.label for m in again.metric] == ["greedy", "beam (k=4)", "sample (seed 0)"]
    bad = open_page(tiny_model_dir, view="<b>nonsense</b>")
    assert not bad.exception and bad.query_params["view"] == "steps" and step_views(bad)


def test_the_comparison_keeps_its_layer_and_head_across_the_other_tabs(
    tiny_model_dir: Path,
) -> None:
    """A widget not drawn in a run loses its state: without the URL's copy, a visit to the
    step view reset the comparison's head to the mean."""
    at = open_page(tiny_model_dir, strategy="beam", view="versus")
    at.selectbox(key="w_vs_layer").select(0).run()
    at.selectbox(key="w_vs_head").select(1).run()
    at.session_state["w_view"] = VIEWS["steps"]
    at.run()
    at.session_state["w_view"] = VIEWS["versus"]
    at.run()
    assert at.selectbox(key="w_vs_layer").value == 0 and at.selectbox(key="w_vs_head").value == 1
    assert (at.query_params["vs_layer"], at.query_params["vs_head"]) == ("0", "1")
    link = open_page(tiny_model_dir, strategy="beam", view="versus", vs_layer="0", vs_head="1")
    assert link.selectbox(key="w_vs_head").value == 1 and not link.exception
    bad = open_page(tiny_model_dir, view="versus", vs_layer="99", vs_head="x")
    assert not bad.exception and bad.selectbox(key="w_vs_head").value == "mean of heads"


def test_a_task_model_never_answers_wrong_without_a_word() -> None:
    """Issue 38: dates wrote 1999-10-03 for "the 3rd of March, 1999" and said nothing; a
    readable input answered wrong gets the right answer named."""
    at = open_bundled("decode", "dates", text="the 3rd of March, 1999")
    assert not at.exception
    said = " ".join(w.value for w in at.warning)
    assert "dates cannot read" in said and "thu 5 mar 2026" in said
    assert "The right answer" not in said
    at = open_bundled("decode", "sort", text="zzzzzzzzzzzzzzzzzz")  # 18: trained on 12
    said = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "The right answer is “zzzzzzzzzzzzzzzzzz”, not “zzzzzzzzzzzz”" in said
    at = open_bundled("decode", "translate", text="a man says that ice cream eats ice cream")
    said = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "The right answer is “un om dice ke gelo gelo manja”" in said
    at = open_bundled("decode", "reverse", text="hello world")
    assert not [w for w in at.warning if "right answer" in w.value]  # right: nothing to say


def test_settings_the_strategy_does_not_use_are_disabled_with_their_values_kept(
    tiny_model_dir: Path,
) -> None:
    """Issue 38: under greedy the beam size stayed editable, showing 4."""
    at = open_page(tiny_model_dir, strategy="greedy", beam_size="6")
    beam = at.number_input(key="w_beam_size")
    assert beam.disabled and beam.value == 6
    assert "is used by beam search only; the strategy is greedy" in str(beam.help)
    assert at.number_input(key="w_length_penalty").disabled
    assert at.number_input(key="w_temperature").disabled and at.number_input(key="w_seed").disabled
    at.selectbox(key="w_strategy").select("beam").run()
    beam = at.number_input(key="w_beam_size")
    assert not beam.disabled and beam.value == 6  # kept while it did not count
    assert at.number_input(key="w_temperature").disabled
    assert shown(at)["view"]  # decoded with it
    at.selectbox(key="w_strategy").select("sample").run()
    assert at.number_input(key="w_beam_size").disabled
    assert not at.number_input(key="w_temperature").disabled
    assert not at.number_input(key="w_seed").disabled


def test_clearing_the_text_clears_the_old_output_and_warnings_and_keeps_the_settings() -> None:
    """Clearing the text leaves no output or warning of the text before (the run that drew
    them is gone), only the message naming the empty text; the settings stay as they were."""
    at = open_bundled("decode", "dates", text="Nov 26th '26", strategy="beam", beam_size="3")
    assert any("cannot read" in w.value for w in at.warning)
    assert any(t.value.startswith("Output:") for t in at.text)
    at.text_input(key="w_text").set_value("").run()
    assert not at.exception
    assert not at.warning and not [t for t in at.text if t.value.startswith("Output:")]
    assert [e.value for e in at.error] == ["text is empty; type at least one character"]
    assert at.number_input(key="w_beam_size").value == 3
    assert at.selectbox(key="w_strategy").value == "beam"


def test_side_by_side_uses_every_setting_so_none_is_disabled(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir, strategy="greedy", view="versus")
    assert not at.number_input(key="w_beam_size").disabled  # its beam search's k
    assert not at.number_input(key="w_seed").disabled  # its sampling's seed


def test_beam_search_writing_a_synonym_is_not_told_it_is_wrong() -> None:
    """translate's beam search finds 'kasa' for "house" where greedy (and the reference)
    write 'ca dom': both right."""
    text = "the man says that the girl sees a house"
    at = open_bundled("decode", "translate", text=text, strategy="beam", beam_size="8")
    assert any("kasa" in t.value for t in at.text if t.value.startswith("Output:"))
    assert not [w for w in at.warning if "right answer" in w.value]


def test_the_norm_measure_redraws_the_steps_and_the_link_keeps_it(tiny_model_dir: Path) -> None:
    at = open_page(tiny_model_dir)
    weights = shown(at)["attention"]
    assert weights["axis"] == "weight" and "weights αᵢⱼ" in weights["title"]
    assert not at.radio(key="w_measure").disabled
    at.radio(key="w_measure").set_value("norm").run()
    norms = shown(at)["attention"]
    assert at.query_params["measure"] == "norm" and norms["axis"] == "α‖f(x)‖"
    assert "norms αᵢⱼ‖f(xⱼ)‖" in norms["title"]
    assert norms["panels"][0]["weights"] != weights["panels"][0]["weights"]
    again = open_page(tiny_model_dir, measure="norm")  # a shared link
    assert shown(again)["attention"]["axis"] == "α‖f(x)‖"


def test_a_model_whose_values_cannot_be_read_greys_the_norm_measure_with_why(
    tmp_path: Path,
) -> None:
    import transformers as T

    from helpers.hf_zoo import ROTARY_DECODER, _ids, tokenizer

    tok = tokenizer("llama")  # OLMo: its W^O is not in ablation.py's list
    T.OlmoForCausalLM(T.OlmoConfig(**{**ROTARY_DECODER, **_ids(tok)})).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    at = open_on(tmp_path, "decode", text="the cat sat", measure="norm")
    assert not at.exception and not at.error
    picker = at.radio(key="w_measure_greyed")  # on weight, what the charts show (not norm)
    assert picker.disabled and picker.value == "weight" and "w_measure" not in at.session_state
    assert at.query_params["measure"] == "norm"  # the user's pick, for a model that has norms
    assert "cannot take this model's values" in str(picker.help)
    assert "olmo" in str(picker.help) and shown(at)["attention"]["axis"] == "weight"
