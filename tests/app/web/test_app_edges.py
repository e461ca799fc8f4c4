"""The app at the edges (issue 16): a sentence pair's second text box and its A/B view, pickers
that follow each kind's own layers and heads, a what-if force past the end named."""

from __future__ import annotations

from typing import Any

from helpers.apptest import chart, open_bundled, open_on, titles
from helpers.hf_zoo import zoo_folder

PAIR = ("the cat sat", "a dog sat on a log")


def test_a_sentence_pair_box_and_the_two_sentences_in_the_figures() -> None:
    at = open_on(zoo_folder("bert"), "explore", text=PAIR[0])
    assert not at.exception and not at.error
    assert not [t for t in titles(at) if "sentence A" in t]  # one text: no pair view
    at.text_input(key="w_pair").input(PAIR[1]).run()
    assert not at.exception and not at.error
    assert at.query_params["pair"] == PAIR[1]
    whole = chart(at, "sentence A: positions 0–4 · sentence B: 5–")
    assert len(whole["layout"]["shapes"]) == 2  # the boundary on both axes
    blocks = {a["text"] for a in whole["layout"]["annotations"]}
    assert blocks == {"A→A", "A→B", "B→A", "B→B"}
    at.selectbox(key="w_pair_block").select("A→B").run()
    assert at.query_params["pair_block"] == "A→B"
    block = chart(at, "sentence A → sentence B")
    cells = block["data"][0]
    assert cells["y"][0].endswith("[CLS]") and cells["x"][0].startswith("5 · ")
    assert len(cells["y"]) == 5 and len(cells["x"]) == 7  # [CLS] the c at [SEP] | B… [SEP]


def test_a_shared_link_opens_the_same_pair_and_block() -> None:
    at = open_on(
        zoo_folder("bert"), "explore", text=PAIR[0], pair=PAIR[1], kind="encoder_self",
        pair_block="B→A",
    )  # fmt: skip
    assert not at.exception and at.text_input(key="w_pair").value == PAIR[1]
    assert chart(at, "sentence B → sentence A")


def test_models_without_pairs_show_no_pair_box(tiny_model_dir: Any) -> None:
    at = open_on(tiny_model_dir, "explore")
    assert not at.exception and not [w for w in at.text_input if w.key == "w_pair"]


def test_pickers_follow_the_layers_and_heads_of_the_kind_shown() -> None:
    """distilbart-like: encoder 3 × 4, decoder 1 × 2. Before, every picker offered the
    encoder's 3 layers, and cross-attention's default layer 2 did not exist."""
    at = open_on(zoo_folder("distilbart"), "explore", text="the cat sat", kind="cross")
    assert not at.exception and not at.error
    assert at.selectbox(key="w_layer").options == ["0"]
    assert at.selectbox(key="w_head").options == ["0", "1"]
    at.selectbox(key="w_kind").select("encoder_self").run()
    assert at.selectbox(key="w_layer").options == ["0", "1", "2"]
    at.selectbox(key="w_layer").select(2).run()
    at.selectbox(key="w_head").select(3).run()
    at.selectbox(key="w_kind").select("cross").run()  # layer 2, head 3 do not exist there
    assert not at.exception and not at.error
    assert at.selectbox(key="w_layer").value == 0 and at.selectbox(key="w_head").value == 0


def test_a_token_forced_after_the_output_ends_is_named_on_the_decode_page() -> None:
    at = open_bundled("decode", "reverse", text="ab", force="5=x")
    assert not at.exception and not at.error
    said = [w.value.replace("\\", "") for w in at.warning]  # shown as text: escaped markdown
    assert any("forced 'x' at step 5 was not used" in w for w in said), said
