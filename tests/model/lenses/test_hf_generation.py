"""One decoding path: greedy and beam search through attnlens' loop equal `generate` with the
model's own generation config (processors, several end tokens, length normalisation), and a
trace without a target is teacher-forced on exactly that greedy output."""

from __future__ import annotations

import atexit
import copy
import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import torch
import transformers as T

from attnlens.model.lenses.hf.lens import HFLens
from attnlens.record.errors import InputError
from helpers.hf_models import reference

TEXTS = ("the cat sat on the mat", "a dog sat on a log")
NEW = 9  # tokens to generate
# Generation configs as real models ship them: bart-large-cnn (forced BOS, no-repeat trigrams,
# a minimum length, length penalty 2), a chat model with two end tokens and a repetition
# penalty, Marian's banned padding with suppressed tokens, Pegasus-like forced end at max length.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "bart-cnn": ("bart", {"forced_bos_token_id": 1, "no_repeat_ngram_size": 3,
                          "min_length": 6, "length_penalty": 2.0, "early_stopping": True,
                          "num_beams": 4}),
    "gpt2-chat": ("gpt2", {"repetition_penalty": 1.3, "no_repeat_ngram_size": 2,
                           "eos_token_id": [2, 40]}),
    "llama-bad-words": ("llama", {"bad_words_ids": [[40, 41], [50]], "min_new_tokens": 4,
                                  "eos_token_id": [2, 60, 61]}),
    "marian-suppress": ("marian", {"suppress_tokens": [27], "begin_suppress_tokens": [35],
                                   "encoder_no_repeat_ngram_size": 2}),
    "t5-forced-end": ("t5", {"repetition_penalty": 1.5, "length_penalty": 0.5, "num_beams": 2,
                             "forced_eos_token_id": 1}),
}  # fmt: skip


@functools.cache
def variant(name: str) -> tuple[HFLens, T.PreTrainedModel]:
    """A tiny model saved with this generation config, loaded by attnlens and as reference."""
    kind, settings = VARIANTS[name]
    model, tok = reference(kind)
    model = copy.deepcopy(model)
    for key, value in settings.items():
        setattr(model.generation_config, key, value)
    folder = Path(tempfile.mkdtemp(prefix=f"attnlens-gen-{name}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return HFLens(folder, torch.device("cpu"), name=name), model.eval()


def generate_ids(name: str, text: str, beams: int) -> list[int]:
    """generate's own output with the model's generation config, after its prefix."""
    lens, model = variant(name)
    source, prefix, _ = lens._decode_inputs(text)
    ids = torch.tensor([list(prefix if source is None else source)])
    with torch.no_grad():
        out = model.generate(
            ids, attention_mask=torch.ones_like(ids), do_sample=False, num_beams=beams,
            max_new_tokens=NEW,
        )[0].tolist()  # fmt: skip
    return out[ids.size(1) :] if source is None else out[1:]


def ours(name: str, text: str, beams: int) -> list[int]:
    lens, _ = variant(name)
    strategy = "beam" if beams > 1 else "greedy"
    run = lens.decode(text, strategy=strategy, beam_size=beams, max_len=NEW)
    return [lens.vocab_ids[t] for t in run.output_tokens]


@pytest.mark.slow
@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("beams", [1, 2, 4])
def test_decoding_equals_generate_with_the_models_own_config(name: str, beams: int) -> None:
    for text in TEXTS:
        got, want = ours(name, text, beams), generate_ids(name, text, beams)
        # generate pads a beam's output that ended early; the padding is not output
        pad = variant(name)[1].generation_config.pad_token_id
        while len(want) > len(got) and want[-1] == pad:
            want.pop()
        assert got == want, (name, text, beams)


def test_the_processors_applied_are_in_the_records_params() -> None:
    lens, _ = variant("bart-cnn")
    run = lens.decode(TEXTS[0], max_len=NEW)
    applied = run.params["generation_config"]
    assert applied["no_repeat_ngram_size"] == 3 and applied["min_length"] == 6
    assert applied["forced_bos_token_id"] == 1
    again = lens.decode(TEXTS[0], run.strategy, **run.params)
    assert again.equals(run)
    plain = lens.decode(TEXTS[0], max_len=NEW, generation_config={})
    assert "generation_config" not in plain.params


def test_any_of_several_end_tokens_ends_a_hypothesis() -> None:
    lens, _ = variant("gpt2-chat")
    assert lens.ends == (2, 40)
    second = lens.names[40]
    run = lens.decode(TEXTS[0], max_len=NEW, force={0: second})
    assert run.output_tokens == (second,) and run.best.finished


def test_a_config_asking_for_another_search_is_refused_by_name() -> None:
    lens, _ = variant("t5-forced-end")
    saved = copy.deepcopy(lens.generation)
    try:
        lens.generation.num_beam_groups = 2  # type: ignore[union-attr]
        lens.generation.diversity_penalty = 0.5  # type: ignore[union-attr]
        with pytest.raises(InputError, match=r"num_beam_groups=2, diversity_penalty=0\.5"):
            lens.decode(TEXTS[0], max_len=3)
    finally:
        lens.generation = saved


def test_trace_without_target_follows_decode_greedy_with_processors() -> None:
    lens, _ = variant("bart-cnn")
    run = lens.decode(TEXTS[1])
    tr = lens.trace(TEXTS[1])
    assert tr.tgt_tokens == (*run.prefix, *run.output_tokens)[:-1]
    assert lens.text_of(tr.tgt_tokens[1:]) == run.output_text or not run.best.finished
