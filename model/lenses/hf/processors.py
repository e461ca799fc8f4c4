"""A Hugging Face model's generation config, as processors in attnlens' one decoding loop.

`generate` changes a model's scores with the processors its generation_config names (forced
BOS/EOS, no-repeat n-grams, minimum length, bad words, repetition penalty, …). attnlens applies
the same processors, transformers' own classes in `generate`'s order, inside its step loop, so
greedy and beam search give what `generate` gives; the settings applied are listed in the
record's params (`generation_config`), where a replay can also change them. Settings that need
another search than greedy, beam or sampling are refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from transformers import GenerationConfig
from transformers.generation.logits_process import (
    EncoderNoRepeatNGramLogitsProcessor,
    EncoderRepetitionPenaltyLogitsProcessor,
    ExponentialDecayLengthPenalty,
    ForcedBOSTokenLogitsProcessor,
    ForcedEOSTokenLogitsProcessor,
    InfNanRemoveLogitsProcessor,
    MinLengthLogitsProcessor,
    MinNewTokensLengthLogitsProcessor,
    NoBadWordsLogitsProcessor,
    NoRepeatNGramLogitsProcessor,
    RepetitionPenaltyLogitsProcessor,
    SequenceBiasLogitsProcessor,
    SuppressTokensAtBeginLogitsProcessor,
    SuppressTokensLogitsProcessor,
)

from attnlens.model.decoding.processors import Processor
from attnlens.record.errors import InputError

# Settings whose processor changes the output, each off at this value (transformers' defaults).
APPLIED: dict[str, Any] = {
    "repetition_penalty": 1.0,
    "encoder_repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0,
    "bad_words_ids": None,
    "min_length": 0,
    "min_new_tokens": None,
    "forced_bos_token_id": None,
    "forced_eos_token_id": None,
    "remove_invalid_values": False,
    "exponential_decay_length_penalty": None,
    "suppress_tokens": None,
    "begin_suppress_tokens": None,
    "sequence_bias": None,
}
# Settings that ask for a search attnlens does not run, with the value that switches them off.
REFUSED: dict[str, Any] = {
    "guidance_scale": None,
    "num_beam_groups": 1,
    "diversity_penalty": 0.0,
    "penalty_alpha": None,
    "dola_layers": None,
    "constraints": None,
    "force_words_ids": None,
    "watermarking_config": None,
}


def applied_settings(config: GenerationConfig | None) -> dict[str, Any]:
    """The output-changing settings a generation config switches on, as plain JSON values."""
    return {name: _plain(value) for name, value in _switched_on(config, APPLIED).items()}


def refused_settings(config: GenerationConfig | None) -> dict[str, Any]:
    """Settings of the config that need a search attnlens does not run."""
    return _switched_on(config, REFUSED)


def _switched_on(config: GenerationConfig | None, table: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of table the config sets to something else than their off value."""
    if config is None:
        return {}
    found = {}
    for name, off in table.items():
        value = getattr(config, name, off)
        if value is not None and value != off and not (name == "guidance_scale" and value == 1):
            found[name] = value
    return found


def refuse(model_name: str, refused: Mapping[str, Any]) -> None:
    """An InputError naming each setting attnlens cannot apply, and what it does instead."""
    if refused:
        named = ", ".join(f"{k}={v!r}" for k, v in refused.items())
        raise InputError(
            f"{model_name}'s generation config sets {named}, which needs a search attnlens does "
            "not run (it decodes greedy, beam or sampling); teacher-force a target instead"
        )


def build_processors(
    settings: Mapping[str, Any],
    ends: Sequence[int],
    prefix_len: int,
    max_len: int,
    source: Sequence[int] | None,
    device: torch.device,
) -> tuple[Processor, ...]:
    """transformers' processors for these settings, in `generate`'s order (its
    `_get_logits_processor`). prefix_len: decoder positions before the first generated token;
    max_len: tokens to generate, so `generate`'s max_length is prefix_len + max_len."""
    where: Any = device  # transformers annotates str; a torch.device is what it uses
    s, eos = dict(settings), torch.tensor(list(ends), device=device)
    encoder_ids: Any = None if source is None else torch.tensor([list(source)], device=device)
    out: list[Processor] = []
    if "repetition_penalty" in s:
        out.append(RepetitionPenaltyLogitsProcessor(float(s["repetition_penalty"])))
    if "encoder_repetition_penalty" in s and encoder_ids is not None:
        penalty = float(s["encoder_repetition_penalty"])
        out.append(EncoderRepetitionPenaltyLogitsProcessor(penalty, encoder_ids))
    if "no_repeat_ngram_size" in s:
        out.append(NoRepeatNGramLogitsProcessor(int(s["no_repeat_ngram_size"])))
    if "encoder_no_repeat_ngram_size" in s and encoder_ids is not None:
        size = int(s["encoder_no_repeat_ngram_size"])
        out.append(EncoderNoRepeatNGramLogitsProcessor(size, encoder_ids))
    if "bad_words_ids" in s:
        out.append(NoBadWordsLogitsProcessor(s["bad_words_ids"], eos))
    if "min_length" in s:
        out.append(MinLengthLogitsProcessor(int(s["min_length"]), eos, device=where))
    if "min_new_tokens" in s:
        minimum = int(s["min_new_tokens"])
        out.append(MinNewTokensLengthLogitsProcessor(prefix_len, minimum, eos, device=where))
    if "forced_bos_token_id" in s:
        out.append(ForcedBOSTokenLogitsProcessor(int(s["forced_bos_token_id"])))
    if "forced_eos_token_id" in s:
        forced = s["forced_eos_token_id"]
        out.append(ForcedEOSTokenLogitsProcessor(prefix_len + max_len, forced, device=where))
    if s.get("remove_invalid_values"):
        out.append(InfNanRemoveLogitsProcessor())
    if "exponential_decay_length_penalty" in s:
        start, factor = s["exponential_decay_length_penalty"]
        out.append(ExponentialDecayLengthPenalty((start, factor), eos, prefix_len))
    if "suppress_tokens" in s:
        out.append(SuppressTokensLogitsProcessor(s["suppress_tokens"], device=where))
    if "begin_suppress_tokens" in s:
        begin = prefix_len + (1 if prefix_len == 1 and "forced_bos_token_id" in s else 0)
        out.append(SuppressTokensAtBeginLogitsProcessor(s["begin_suppress_tokens"], begin, where))
    if "sequence_bias" in s:
        out.append(SequenceBiasLogitsProcessor(_sequence_bias(s["sequence_bias"])))
    return tuple(out)


def _plain(value: Any) -> Any:
    """A config value as JSON can hold it (tuples as lists, sequence_bias as pairs)."""
    if isinstance(value, dict):
        return [[list(k) if isinstance(k, tuple) else k, v] for k, v in value.items()]
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _sequence_bias(value: Any) -> Any:
    """sequence_bias back from its JSON form ([[tokens, bias], …]) to what transformers takes."""
    if isinstance(value, dict):
        return value
    return [[list(tokens), float(bias)] for tokens, bias in value]
