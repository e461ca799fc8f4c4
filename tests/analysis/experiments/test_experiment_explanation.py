"""Input erasure (Abnar & Zuidema): each erased token's drop in log-probability, checked
against an independent teacher-forced trace of the text with that token unknown."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlens.analysis.experiments.explanation import erasure_case, erasure_cases
from attnlens.model.lenses.lens import Lens
from attnlens.record.errors import InputError


def blanked(ids: list[int], k: int, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """ids with position k replaced by <pad>, (1, T), and which keys stay visible, (T,): the
    mask is built here by hand, not by the lens."""
    row = torch.tensor([[pad if i == k else t for i, t in enumerate(ids)]])
    keep = torch.tensor([i != k for i in range(len(ids))])
    return row, keep


@torch.no_grad()
def test_decoder_erasure_is_the_drop_with_that_token_hidden_from_every_query(
    hand_lm: Lens,
) -> None:
    text = "abcab.ca"
    case = erasure_case(hand_lm, text)
    assert case.input_tokens[0] == "<s>" and np.isnan(case.erasure[0])  # markers never erased
    full = hand_lm.trace(text, case.output_token).tgt_logprobs
    assert full is not None and case.logprob == pytest.approx(float(full[len(text)]), abs=1e-5)
    net, tok = hand_lm.net, hand_lm.tokenizer  # type: ignore[attr-defined]
    ids = [tok.bos_id, *tok.encode(text).ids]
    out = tok.index[case.output_token]
    for k in range(1, len(ids)):
        row, keep = blanked(ids, k, tok.pad_id)
        mask = torch.tril(torch.ones(len(ids), len(ids), dtype=torch.bool)) & keep  # (T, T)
        lp = net.log_probs(net.decode(row, mask.unsqueeze(0)).hidden)[0, -1, out]
        assert case.erasure[k] == pytest.approx(case.logprob - float(lp), abs=1e-5)


@torch.no_grad()
def test_seq2seq_erasure_is_the_drop_with_that_source_token_hidden(hand_reverse: Lens) -> None:
    text = "abc12"
    case = erasure_case(hand_reverse, text, output=1)
    assert case.seq2seq and case.output_position == 1 and np.isnan(case.erasure[-1])  # </s>
    net, tok = hand_reverse.net, hand_reverse.tokenizer  # type: ignore[attr-defined]
    src = [*tok.encode(text).ids, tok.eos_id]
    output = hand_reverse.decode(text).output_tokens
    tgt = torch.tensor([[tok.bos_id, *(tok.index[t] for t in output)]])
    causal = torch.tril(torch.ones(tgt.size(1), tgt.size(1), dtype=torch.bool)).unsqueeze(0)
    for k in range(len(text)):
        row, keep = blanked(src, k, tok.pad_id)
        src_mask = keep.view(1, 1, -1)
        memory = net.encode(row, src_mask).memory
        hidden = net.decode(net.memory_kv(memory), src_mask, tgt, causal).hidden
        lp = net.log_probs(hidden)[0, 1, tok.index[case.output_token]]
        assert case.erasure[k] == pytest.approx(case.logprob - float(lp), abs=1e-5)


def test_held_out_cases_are_drawn_from_the_seed(hand_reverse: Lens) -> None:
    first, again = erasure_cases(hand_reverse, 4, seed=2), erasure_cases(hand_reverse, 4, seed=2)
    assert [c.input_tokens for c in first] == [c.input_tokens for c in again]
    assert all(
        np.array_equal(a.erasure, b.erasure, equal_nan=True)
        for a, b in zip(first, again, strict=True)
    )


def test_an_output_position_past_the_output_is_refused(hand_reverse: Lens) -> None:
    with pytest.raises(InputError, match="does not exist"):
        erasure_case(hand_reverse, "abc", output=99)


def test_a_decoder_explains_the_token_after_the_text_only(hand_lm: Lens) -> None:
    with pytest.raises(InputError, match="after the text"):
        erasure_case(hand_lm, "abc", output=0)
