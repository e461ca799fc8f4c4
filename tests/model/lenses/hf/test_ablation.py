"""Head ablation on Hugging Face models (model/lenses/hf/ablation.py): zeroing a head's share of
the output projection W^O gives exactly what silencing the head another way gives (its value
projection zeroed in an independent copy of the model), for every kind of attention and the
main families of weights (GPT-2's Conv1D, BERT, DistilBERT, BART, T5, Llama with and without
grouped keys and values); in every architecture of the zoo the zeroed projection sits between
the attention of its layer and the next; where it cannot be found, the lens says why."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import pytest
import torch
import transformers as T

from attnlens.model.decoding.heads import HeadRef
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.token_runs import TokenBatch, TokenRun
from attnlens.record.errors import InputError
from attnlens.record.trace import Kind
from helpers.hf_zoo import ZOO, camembert_folder, zoo_folder
from helpers.parts import ablation, runs, why_no_ablation
from helpers.silenced import loud, values_zeroed

CPU = torch.device("cpu")
TEXTS = ("the cat sat on the mat", "a dog sat")
EFFECT = 1e-2  # what ablating one head of a loud model changes at least, against TOLERANCE
TOLERANCE = 1e-4  # and relative: a loud T5's log-probabilities reach -45 (float32 keeps 7 digits)


@functools.cache
def lens(name: str) -> HFLens:
    return HFLens(loud(name)[0], CPU, name=name)


def batch(the_lens: HFLens) -> TokenBatch:
    """TEXTS as ids (an encoder-decoder: as sources, teacher-forced on their first tokens)."""
    ids = [list(runs(the_lens).token_ids(t)) for t in TEXTS]
    if the_lens.architecture != "encoder-decoder":
        return TokenBatch(ids)
    start = runs(the_lens).token_space().start
    assert start is not None
    return TokenBatch([[start, *row[:4]] for row in ids], ids)


def own_run(
    model: T.PreTrainedModel, architecture: str, tokens: list[int], source: list[int] | None
):
    """(the output attnlens compares: next-token log-probabilities, or an encoder's last hidden
    states; every attention of the model) of one unpadded sequence, from the model itself."""
    with torch.no_grad():
        if architecture == "encoder-decoder":
            out = model(input_ids=torch.tensor([source]), decoder_input_ids=torch.tensor([tokens]),
                        output_attentions=True, use_cache=False)  # fmt: skip
            attention = {"decoder_self": out.decoder_attentions, "cross": out.cross_attentions,
                         "encoder_self": out.encoder_attentions}  # fmt: skip
        else:
            out = model(input_ids=torch.tensor([tokens]), output_attentions=True)
            attention = {
                "encoder_self" if architecture == "encoder" else "decoder_self": out.attentions
            }
    if architecture == "encoder":
        return out.last_hidden_state[0].numpy(), attention
    logprobs = torch.log_softmax(out.logits[0], -1)[:-1]  # (T - 1, V)
    return logprobs.gather(-1, torch.tensor(tokens[1:])[:, None])[:, 0].numpy(), attention


def check_equal(run: TokenRun, model: T.PreTrainedModel, the_lens: HFLens, b: TokenBatch) -> None:
    """run (attnlens, ablated by W^O) holds what model (silenced by its values) computes."""
    for i, tokens in enumerate(b.tokens):
        source = None if b.source is None else list(b.source[i])
        want, attention = own_run(model, the_lens.architecture, list(tokens), source)
        T_ = len(tokens)
        got = (
            run.hidden[i, :T_] if the_lens.architecture == "encoder" else run.logprobs[i, : T_ - 1]
        )
        np.testing.assert_allclose(got, want, atol=TOLERANCE, rtol=TOLERANCE)
        for kind, per_layer in attention.items():
            mine = getattr(run, kind)[i]  # (L, H, Q, K) padded
            theirs = torch.stack([a[0] for a in per_layer]).numpy()
            Q, K = theirs.shape[-2:]
            np.testing.assert_allclose(
                mine[:, :, :Q, :K], theirs, atol=TOLERANCE, rtol=TOLERANCE, err_msg=kind
            )


CASES = [  # (source, heads ablated, (kind, layer, value heads zeroed in the reference))
    ("gpt2", ["decoder_self:1.0"], ("decoder_self", 1, [0])),
    ("gpt2", ["decoder_self:0.1"], ("decoder_self", 0, [1])),
    ("bert", ["encoder_self:0.1"], ("encoder_self", 0, [1])),
    ("zoo-distilbert", ["encoder_self:0.0"], ("encoder_self", 0, [0])),
    ("llama", ["decoder_self:0.1"], ("decoder_self", 0, [1])),
    # zoo-llama's two query heads share one value head
    ("zoo-llama", ["decoder_self:0.0", "decoder_self:0.1"], ("decoder_self", 0, [0])),
    ("bart", ["encoder_self:1.1"], ("encoder_self", 1, [1])),
    ("bart", ["decoder_self:0.0"], ("decoder_self", 0, [0])),
    ("bart", ["cross:0.1"], ("cross", 0, [1])),
    ("t5", ["encoder_self:0.0"], ("encoder_self", 0, [0])),
    ("t5", ["decoder_self:1.1"], ("decoder_self", 1, [1])),
    ("t5", ["cross:1.0"], ("cross", 1, [0])),
]


@pytest.mark.parametrize(("source", "heads", "silenced"), CASES)
def test_zeroing_w_o_equals_silencing_the_heads_values(
    source: str, heads: list[str], silenced: tuple[str, int, list[int]]
) -> None:
    the_lens, model = lens(source), loud(source)[1]
    kind, layer, value_heads = silenced
    refs = [HeadRef(*_parts(h)) for h in heads]
    b = batch(the_lens)
    run = ablation(the_lens).run_tokens(b, refs)
    check_equal(run, values_zeroed(model, kind, layer, value_heads), the_lens, b)
    plain = runs(the_lens).run_tokens(b)
    check_equal(plain, model, the_lens, b)  # and nothing ablated is the model itself
    output = "hidden" if the_lens.architecture == "encoder" else "logprobs"
    assert np.nanmax(np.abs(getattr(run, output) - getattr(plain, output))) > EFFECT


def _parts(name: str) -> tuple[Kind, int, int]:
    kind, rest = name.split(":")
    layer, head = rest.split(".")
    return kind, int(layer), int(head)  # type: ignore[return-value]


def test_decoding_with_a_head_ablated_is_greedy_on_the_silenced_model() -> None:
    for source, head, (kind, layer, value_heads) in (
        ("gpt2", "decoder_self:1.1", ("decoder_self", 1, [1])),
        ("bart", "cross:1.0", ("cross", 1, [0])),
    ):
        the_lens, model = lens(source), loud(source)[1]
        silent = values_zeroed(model, kind, layer, value_heads)
        run = the_lens.decode(TEXTS[0], max_len=5, ablate=[head], generation_config={})
        assert run.params["ablate"] == [head]
        b = batch(the_lens)
        source_ids = None if b.source is None else list(b.source[0])
        fed = [the_lens.vocab_ids[t] for t in run.prefix]
        assert run.steps
        for step in run.steps:  # each step's token and log p, from the silenced model
            logprobs = _next_logprobs(silent, the_lens.architecture, fed, source_ids)
            chosen = int(logprobs.argmax())
            assert step.beams[0].token == the_lens.names[chosen]
            assert step.beams[0].logprob == pytest.approx(float(logprobs[chosen]), abs=1e-4)
            fed.append(chosen)


def _next_logprobs(
    model: T.PreTrainedModel, architecture: str, fed: Sequence[int], source: list[int] | None
) -> torch.Tensor:
    with torch.no_grad():
        if architecture == "encoder-decoder":
            out = model(input_ids=torch.tensor([source]), decoder_input_ids=torch.tensor([fed]),
                        use_cache=False)  # fmt: skip
        else:
            out = model(input_ids=torch.tensor([list(fed)]))
    return torch.log_softmax(out.logits[0, -1], -1)


def _stack(kind: Kind) -> Kind:
    """The self-attention of the stack a head of this kind sits in."""
    return "encoder_self" if kind == "encoder_self" else "decoder_self"


@pytest.mark.slow
@pytest.mark.parametrize("name", ZOO)
def test_each_architectures_projection_sits_between_its_layer_and_the_next(name: str) -> None:
    the_lens = HFLens(zoo_folder(name), CPU, name=name)
    reason = why_no_ablation(the_lens)
    if name == "albert":
        assert reason is not None and "shares one set of weights" in reason
        return
    assert reason is None
    b = batch(the_lens)
    plain = runs(the_lens).run_tokens(b)
    kinds: tuple[Kind, ...] = {"encoder": ("encoder_self",), "decoder": ("decoder_self",)}.get(
        the_lens.architecture, ("encoder_self", "decoder_self", "cross")
    )
    for kind in kinds:
        run = ablation(the_lens).run_tokens(b, [HeadRef(kind, 0, 0)])
        own = getattr(run, _stack(kind))
        np.testing.assert_array_equal(own[:, 0], getattr(plain, _stack(kind))[:, 0])
        if kind == "cross":
            np.testing.assert_array_equal(run.cross[:, 0], plain.cross[:, 0])
        if own.shape[1] > 1:  # the next layer reads what the ablated head no longer wrote
            assert np.nanmax(np.abs(own[:, 1] - getattr(plain, _stack(kind))[:, 1])) > 1e-9
        output = "hidden" if the_lens.architecture == "encoder" else "logprobs"
        assert np.nanmax(np.abs(getattr(run, output) - getattr(plain, output))) > 1e-9


@pytest.fixture(scope="module")
def camembert(tmp_path_factory: pytest.TempPathFactory) -> HFLens:
    folder = camembert_folder(tmp_path_factory.mktemp("camembert"))
    return HFLens(folder, CPU, name="tiny-camembert")


def test_an_architecture_whose_projection_is_not_known_says_so_and_is_not_guessed(
    camembert: HFLens,
) -> None:
    reason = why_no_ablation(camembert)
    assert reason is not None and "camembert" in reason and "output projection" in reason
    assert "attnlens does not know" in reason, reason
    assert camembert.capabilities.ablation is None  # no part to call: nothing is guessed
    ids = list(runs(camembert).token_ids("hello world"))  # its attention still runs
    assert runs(camembert).run_tokens(TokenBatch([ids])).encoder_self is not None


def test_a_head_the_model_lacks_is_refused_with_its_stacks_limits() -> None:
    ids = list(runs(lens("gpt2")).token_ids("hello world"))
    with pytest.raises(InputError, match="does not exist: the model has layers 0-1"):
        ablation(lens("gpt2")).run_tokens(TokenBatch([ids]), [HeadRef("decoder_self", 2, 0)])
    with pytest.raises(InputError, match="no cross attention"):
        ablation(lens("gpt2")).run_tokens(TokenBatch([ids]), [HeadRef("cross", 0, 0)])
