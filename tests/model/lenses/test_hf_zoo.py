"""The audit's comparison, one architecture at a time over tiny locally built models
(tests/helpers/hf_zoo.py): what attnlens records is what the model computed, and what it
decodes is what `generate` gives.

Per architecture: every kind of attention equals the model's own output_attentions on the same
tokens, in the shape ModelInfo states for that kind; every row sums to 1 and every entry the
recorded mask (per layer where layers differ) forbids is exactly 0 and every entry it allows
gets weight from some head (the mask is the one applied), with no warning of a mask
attnlens could not derive; tgt_logprobs are the model's own log-softmax; the position scheme is
stated, with a table only where one is added to the embeddings; a text inside the vocabulary
gets no vocabulary warning; greedy and beam search equal `generate` with the model's own
generation config. Ablating a head equals the model's own forward on a copy with that head's
share of W^O zeroed, or the lens says in one line why it cannot ablate.
"""

from __future__ import annotations

import copy
import functools

import numpy as np
import pytest
import torch
from transformers.pytorch_utils import Conv1D

from attnlens.model.decoding.heads import HeadRef
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.token_runs import TokenBatch
from attnlens.record.trace import KINDS, Trace
from helpers.hf_zoo import ZOO, zoo_folder, zoo_reference
from helpers.parts import ablation, runs, why_no_ablation

CPU = torch.device("cpu")
TEXT = "the cat sat on the mat on the mat"
NEW = 6  # tokens generated per comparison
# generate sizes its cache by the encoder's layers, and fails on a deeper decoder (IndexError in
# cache_utils); attnlens decodes it, and is compared with generate run without a cache
CACHELESS = {"t5-deeper-decoder"}
SCHEMES = {
    "bert": "learned", "roberta": "learned", "xlm-roberta": "learned", "distilbert": "learned",
    "albert": "learned", "electra": "learned", "deberta": "relative", "deberta-v2": "relative",
    "roformer": "rotary", "mpnet": "learned", "modernbert": "rotary", "gpt2": "learned",
    "gpt-neo": "learned",
    "gptj": "rotary", "codegen": "rotary", "gpt-bigcode": "learned", "gpt-neox": "rotary",
    "bloom": "alibi", "mpt": "alibi", "falcon": "rotary", "opt": "learned", "biogpt": "learned",
    "xglm": "sinusoidal", "ctrl": "sinusoidal", "llama": "rotary", "mistral": "rotary",
    "qwen2": "rotary", "qwen3": "rotary", "gemma": "rotary", "gemma2": "rotary", "phi": "rotary",
    "starcoder2": "rotary", "bart": "learned", "distilbart": "learned", "mbart": "learned",
    "marian": "sinusoidal", "pegasus": "sinusoidal", "m2m100": "sinusoidal",
    "blenderbot-small": "learned", "t5": "relative", "t5-deeper-decoder": "relative",
}  # fmt: skip


@functools.cache
def lens(name: str) -> HFLens:
    return HFLens(zoo_folder(name), CPU, name=name)


def own_outputs(name: str, tr: Trace) -> dict[str, object]:
    """The reference model's attention and log-probabilities on the tokens tr records."""
    model, tok = zoo_reference(name)
    src = torch.tensor([tok.convert_tokens_to_ids(list(tr.src_tokens))])  # (1, S)
    tgt = torch.tensor([tok.convert_tokens_to_ids(list(tr.tgt_tokens))])  # (1, T)
    with torch.no_grad():
        if ZOO[name].architecture == "encoder":
            out = model(input_ids=src, attention_mask=torch.ones_like(src), output_attentions=True)
            return {"encoder_self": out.attentions}
        if ZOO[name].architecture == "decoder":
            out = model(input_ids=tgt, attention_mask=torch.ones_like(tgt), output_attentions=True)
            return {"decoder_self": out.attentions, "logits": out.logits}
        out = model(
            input_ids=src, attention_mask=torch.ones_like(src), decoder_input_ids=tgt,
            output_attentions=True, use_cache=False,
        )  # fmt: skip
    return {
        "encoder_self": out.encoder_attentions, "decoder_self": out.decoder_attentions,
        "cross": out.cross_attentions, "logits": out.logits,
    }  # fmt: skip


def check_attention(name: str, tr: Trace) -> None:
    own = own_outputs(name, tr)
    for kind in KINDS:
        weights = tr.attention(kind)
        if kind not in own:
            assert weights is None, kind
            continue
        want = torch.stack([a[0] for a in own[kind]]).numpy()  # type: ignore[attr-defined]
        assert weights is not None and weights.shape[:2] == tr.model.shape(kind), kind
        np.testing.assert_allclose(weights, want, atol=1e-6, err_msg=kind)
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
        for layer in range(weights.shape[0]):
            mask = tr.mask(kind, layer)  # exact: allowed where some head gives weight
            assert mask is not None, (kind, layer)
            assert np.array_equal(mask, (weights[layer] != 0).any(axis=0)), (kind, layer)
    assert not [w for w in tr.warnings if "mask" in w or "vocabulary" in w], tr.warnings
    if "logits" in own and tr.tgt_logprobs is not None:
        logprobs = torch.log_softmax(own["logits"][0], -1)  # type: ignore[index]
        nxt = [*tr.tgt_tokens[1:], None]
        _, tok = zoo_reference(name)
        for t, token in enumerate(nxt[:-1]):
            want_t = float(logprobs[t, tok.convert_tokens_to_ids(token)])
            assert abs(float(tr.tgt_logprobs[t]) - want_t) < 1e-5, (t, token)


def check_positions(name: str, tr: Trace) -> None:
    assert tr.positional_scheme == SCHEMES[name]
    table = tr.positional_encoding
    if SCHEMES[name] in ("learned", "sinusoidal"):
        P = max(len(tr.src_tokens), len(tr.tgt_tokens))
        assert table is not None and table.shape[0] == P
        narrow = f"{table.shape[1]}-wide embedding space"  # ALBERT, ELECTRA: before projecting
        assert table.shape[1] == tr.model.d_model or any(narrow in w for w in tr.warnings)
    else:
        assert table is None


def generated(name: str, strategy: str, beams: int) -> tuple[list[str], list[str]]:
    """(ours, generate's) output tokens for TEXT."""
    model, tok = zoo_reference(name)
    run = lens(name).decode(TEXT, strategy, beam_size=beams, max_len=NEW)  # type: ignore[arg-type]
    source = ZOO[name].architecture == "encoder-decoder"
    given = run.src_tokens if source else run.prefix
    ids = torch.tensor([tok.convert_tokens_to_ids(list(given))])
    with torch.no_grad():
        out = model.generate(
            ids, attention_mask=torch.ones_like(ids), do_sample=False, num_beams=beams,
            max_new_tokens=NEW, use_cache=name not in CACHELESS,
        )[0].tolist()  # fmt: skip
    out = out[1:] if source else out[ids.size(1) :]
    want = tok.convert_ids_to_tokens(out)
    pad = tok.pad_token
    while len(want) > len(run.output_tokens) and want[-1] == pad:
        want.pop()  # generate pads a beam that ended early
    return list(run.output_tokens), want


@pytest.mark.slow
@pytest.mark.parametrize("name", ZOO)
def test_records_are_the_models_own_computation_and_decoding_is_generates(name: str) -> None:
    tr = lens(name).trace(TEXT)
    check_attention(name, tr)
    check_positions(name, tr)
    if ZOO[name].architecture == "encoder":
        return
    for strategy, beams in (("greedy", 1), ("beam", 3)):
        ours, want = generated(name, strategy, beams)
        assert ours == want, (strategy, ours, want)


# Ablation: attnlens silences a head as a copy of the model with that head's share of W^O
# zeroed does (to 1e-5, the model's own forward on the copy), or says in one line why it cannot.


def weight_copy(model: torch.nn.Module, path: str, head: int, heads: int) -> torch.nn.Module:
    """A deep copy of model with head's input slice of the projection at path zeroed."""
    twin = copy.deepcopy(model).eval()
    module = twin.get_submodule(path)
    rows = isinstance(module, Conv1D)  # GPT-2's Conv1D keeps its weight (in, out)
    width = module.weight.shape[0 if rows else 1] // heads
    span = slice(head * width, (head + 1) * width)
    with torch.no_grad():
        (module.weight[span] if rows else module.weight[:, span]).zero_()
    return twin


def own_output(
    model: torch.nn.Module, architecture: str, src: list[int], tgt: list[int]
) -> np.ndarray:
    """What the experiments compare: a decoder's log-probabilities of its next tokens, an
    encoder's last hidden states (on one unpadded sequence)."""
    with torch.no_grad():
        if architecture == "encoder":
            ids = torch.tensor([src])
            return (
                model(input_ids=ids, attention_mask=torch.ones_like(ids))
                .last_hidden_state[0]
                .numpy()
            )
        if architecture == "decoder":
            ids = torch.tensor([tgt])
            logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0]
        else:
            ids, out = torch.tensor([src]), torch.tensor([tgt])
            logits = model(input_ids=ids, attention_mask=torch.ones_like(ids),
                           decoder_input_ids=out, use_cache=False).logits[0]  # fmt: skip
    lp = torch.log_softmax(logits.float(), -1)[:-1].gather(-1, torch.tensor(tgt[1:])[:, None])
    return lp[:, 0].numpy()


@pytest.mark.slow
@pytest.mark.parametrize("name", ZOO)
def test_a_head_is_silenced_as_a_weight_copy_silences_it_or_the_lens_says_why_not(
    name: str,
) -> None:
    lens_ = lens(name)
    reason = why_no_ablation(lens_)
    if reason is not None:
        assert reason.strip() and "\n" not in reason and len(reason) < 400, reason
        return
    model, _ = zoo_reference(name)
    kind, arch = lens_.info.kinds[-1], ZOO[name].architecture
    heads = lens_.info.shape(kind)[1]
    ref = HeadRef(kind, 0, heads - 1)
    ids = list(runs(lens_).token_ids(TEXT))
    space = runs(lens_).token_space()
    tgt = ids if arch != "encoder-decoder" else [space.start, *ids[:4]]  # type: ignore[list-item]
    batch = TokenBatch([tgt]) if arch != "encoder-decoder" else TokenBatch([tgt], [ids])
    field = "hidden" if arch == "encoder" else "logprobs"
    got = getattr(ablation(lens_).run_tokens(batch, [ref]), field)[0]
    plain = getattr(runs(lens_).run_tokens(batch), field)[0]
    path = lens_.projections.found[kind, 0].path
    want = own_output(weight_copy(model, path, ref.head, heads), arch, ids, tgt)
    np.testing.assert_allclose(got, want, atol=1e-5, err_msg=name)
    assert np.abs(got - plain).max() > 0, name  # the head wrote something: a real comparison
