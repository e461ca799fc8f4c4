"""How a Hugging Face model decodes through attnlens' one step loop (model/decoding/loop.py):
on its own cache, with the processors of its generation config (`processors.py`) and
`generate`'s length normalisation, so greedy and beam search give what `generate` gives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from attnlens.model.budget import check_budget, decode_bytes
from attnlens.model.decoding.loop import Vocabulary, search
from attnlens.model.decoding.request import DecodeSettings, ModelLimits
from attnlens.model.lenses.hf.ablation import OutputProjections
from attnlens.model.lenses.hf.encoding import Encoded, encode_prompt, encode_source, start_id
from attnlens.model.lenses.hf.processors import (
    applied_settings,
    build_processors,
    refuse,
    refused_settings,
)
from attnlens.model.lenses.hf.step_norms import norms_missing
from attnlens.model.lenses.hf.stepper import HFStepper
from attnlens.model.lenses.lens import DecodePlan, forced_past_end
from attnlens.record.decode import DecodeRun
from attnlens.record.errors import InputError
from attnlens.record.trace import Architecture, ModelInfo

MIN_DEFAULT_NEW = 16  # without a length in the generation config: twice the input, at least this


class HFDecoding:
    """HFLens' decoding: greedy, beam search and sampling, every step recorded."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    architecture: Architecture
    info: ModelInfo
    device: torch.device
    names: tuple[str, ...]
    vocab_ids: dict[str, int]
    ends: tuple[int, ...]
    generation: Any  # the model's GenerationConfig, or None
    projections: OutputProjections
    _max_tokens: int  # the longest input, HFLens.max_tokens

    def default_new_tokens(self, source_len: int) -> int:
        """How many tokens to generate when the request names no length: the generation
        config's own length when it states one, else twice the input and at least 16."""
        stated = {} if self.generation is None else self.generation.to_diff_dict()
        if stated.get("max_new_tokens"):
            wanted = int(stated["max_new_tokens"])
        elif stated.get("max_length"):
            fed = 1 if self.architecture == "encoder-decoder" else source_len  # generate counts
            wanted = int(stated["max_length"]) - fed
        else:
            wanted = max(MIN_DEFAULT_NEW, 2 * source_len)
        return max(1, min(self._max_tokens - 1, wanted))

    def decode_plan(self, text: str) -> DecodePlan:
        """Greedy, beam search or sampling through the shared loop on the model's own cache;
        scores are the model's own log-probabilities, choices are those of `generate`."""
        refuse(self.info.name, refused_settings(self.generation))
        source, prefix, given = self._decode_inputs(text)
        room = self._max_tokens - len(prefix)  # decoder positions left after the prefix
        wanted = self.default_new_tokens(len(source if source is not None else prefix))
        return DecodePlan(self._limits(room, wanted), lambda s: self._run(s, source, prefix, given))

    def _run(
        self,
        settings: DecodeSettings,
        source: tuple[int, ...] | None,
        prefix: tuple[int, ...],
        given: Encoded,
    ) -> DecodeRun:
        context = len(source) if source is not None else len(prefix)
        L, H = self.info.shape("decoder_self")
        needed = decode_bytes(L, H, context, settings.max_len, settings.width)
        check_budget(needed, "decode", "use a shorter max length or fewer beams")
        processors = build_processors(
            settings.generation_config, self.ends, len(prefix), settings.max_len, source,
            self.device,
        )  # fmt: skip
        vocab = Vocabulary(self.names, self._end(), self._detokenize, (), processors, self.ends[1:])
        stepper = HFStepper(self.model, self.architecture, self.projections, carried=True)
        steps, hypotheses = search(stepper, settings, source, prefix, vocab)
        params = settings.params(self.names)
        warnings = (*given.warnings, *forced_past_end(settings, steps, self.names))
        missing = None
        if not all(s.decoder_self_carried is not None for s in steps):
            missing = norms_missing(self.model, self.info) or "its cache's values cannot be read"
        return DecodeRun(
            settings.strategy, params, given.tokens, hypotheses, steps, self.info,
            warnings, tuple(self.names[i] for i in prefix), missing,
        )  # fmt: skip

    def _decode_inputs(self, text: str) -> tuple[tuple[int, ...] | None, tuple[int, ...], Encoded]:
        """(source ids or None, decoder prefix, what the record shows as the source)."""
        name, limit = self.info.name, self._max_tokens
        if self.architecture == "encoder":
            raise InputError(f"{name} is an encoder-only model: it does not generate text")
        if self.architecture == "decoder":
            prompt = encode_prompt(self.tokenizer, text, None, limit, name)
            if len(prompt.ids) >= limit:
                raise InputError(f"text fills all {limit} positions of {name}: no room to decode")
            return None, prompt.ids, prompt
        src = encode_source(self.tokenizer, text, limit, name)
        return src.ids, (start_id(self.model, self.tokenizer),), src

    def _limits(self, room: int, wanted: int) -> ModelLimits:
        generation = self.generation
        return ModelLimits(
            max(1, room), self.vocab_ids, self.info.n_layers, self.info.n_heads,
            self.info.kinds,
            self.architecture, default_max_len=min(max(1, room), wanted), length_norm="power",
            default_length_penalty=_length_penalty(generation),
            early_stopping=getattr(generation, "early_stopping", False) or False,
            generation_config=applied_settings(generation),
            shapes={kind: self.info.shape(kind) for kind in ("decoder_self", "cross")},
        )  # fmt: skip

    def _end(self) -> int:
        if not self.ends:
            raise InputError(f"{self.info.name}: the config names no end token")
        return self.ends[0]

    def _detokenize(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))


def _length_penalty(generation: object) -> float:
    """The config's length penalty; unset (None in transformers 5) is generate's default 1.0."""
    value = getattr(generation, "length_penalty", None)
    return 1.0 if value is None else float(value)
