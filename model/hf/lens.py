"""HFLens: any Hugging Face transformers model, traced into the same records as our own."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from model.decoding import DecodeRun, DecodeSettings, ModelLimits, Vocabulary, search
from model.decoding.heads import HeadKind
from model.errors import InputError
from model.hf.architecture import config_limit, model_info, sliding_window
from model.hf.inputs import (
    Encoded,
    encode_prompt,
    encode_source,
    encode_target,
    end_id,
    is_byte_level,
    start_id,
)
from model.hf.loading import load_folder, resolve
from model.hf.positions import Positions
from model.hf.stepper import HFStepper, ablation_unsupported, banned_tokens
from model.hf.tokens import display_tokens
from model.hf.tracing import Runner, decoder_trace, encoder_trace, seq2seq_trace
from model.lens import DecodePlan, Lens
from model.trace import Trace


class HFLens(Lens):
    """A Hugging Face model (local folder or hub id) with eager attention, traced by return
    value. Shared between threads: nothing changes after construction."""

    def __init__(
        self,
        source: str | Path,
        device: torch.device,
        name: str | None = None,
        *,
        allow_pickle: bool = False,
        cache_dir: Path | None = None,
        description: str = "",
    ) -> None:
        folder = resolve(str(source), allow_pickle, cache_dir)
        loaded = load_folder(folder, device, allow_pickle)
        self.model, self.tokenizer, self.kind = loaded.model, loaded.tokenizer, loaded.kind
        self.folder, self.device = folder, device
        self.info = model_info(name or str(source), loaded.kind, loaded.config)
        self.description = description or (
            f"{loaded.config.model_type} {loaded.kind} model ({source}), "
            f"{self.info.n_layers} layers × {self.info.n_heads} heads"
        )
        self.example = "the cat sat on the mat because it was tired"
        positions = Positions.of(loaded.model, loaded.config)
        window, everywhere = sliding_window(loaded.config)
        self.runner = Runner(
            loaded.model, self.info, positions, device,
            window=window if everywhere else None,
            window_on_some_layers=None if everywhere else window,
        )  # fmt: skip
        self.byte_level = is_byte_level(loaded.tokenizer)
        tokenizer_limit = getattr(loaded.tokenizer, "model_max_length", None)
        self._max_tokens = positions.limit or config_limit(loaded.config, tokenizer_limit)
        self.eos = end_id(loaded.model, loaded.tokenizer)
        self.names = token_names(
            loaded.tokenizer, int(loaded.model.config.get_text_config().vocab_size)
        )
        self.vocab_ids = {name: i for i, name in enumerate(self.names)}  # str -> id

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def display_tokens(self, tokens: Sequence[str]) -> list[str]:
        """Readable forms of this model's token strings (Ġ, ▁ and ## markers handled)."""
        return display_tokens(tokens, self.byte_level)

    def trace(self, text: str, target: str | None = None) -> Trace:
        """Teacher-forced on target; an encoder-decoder without one, on its own greedy output."""
        name, limit = self.info.name, self.max_tokens
        if self.kind == "encoder":
            if target is not None:
                raise InputError(f"{name} is an encoder-only model: it takes no target")
            return encoder_trace(self.runner, encode_source(self.tokenizer, text, limit, name))
        if self.kind == "decoder":
            prompt = encode_prompt(self.tokenizer, text, target, limit, name)
            return decoder_trace(self.runner, prompt, self.eos)
        src = encode_source(self.tokenizer, text, limit, name)
        if target is None:
            dec, next_ids = self._greedy(src)
        else:
            dec, next_ids = self._forced(target)
        return seq2seq_trace(self.runner, src, dec, next_ids)

    def _end(self) -> int:
        if self.eos is None:
            raise InputError(f"{self.info.name}: the config names no end token")
        return self.eos

    def _decoder_side(self, ids: Sequence[int], warnings: Sequence[str] = ()) -> Encoded:
        tokens = self.tokenizer.convert_ids_to_tokens(list(ids))
        return Encoded(tuple(ids), tuple(str(t) for t in tokens), tuple(warnings))

    def _forced(self, target: str) -> tuple[Encoded, tuple[int, ...]]:
        """Decoder inputs [start, target...] and next tokens [target..., end]."""
        eos = self._end()
        tgt = encode_target(self.tokenizer, target, self.max_tokens, self.info.name, eos)
        start = start_id(self.model, self.tokenizer)
        return self._decoder_side((start, *tgt.ids), tgt.warnings), (*tgt.ids, eos)

    def default_new_tokens(self, source_len: int) -> int:
        """How many tokens to generate when no target is given: twice the source, at least 16."""
        return max(1, min(self.max_tokens - 1, max(16, 2 * source_len)))

    @torch.inference_mode()
    def _greedy(self, src: Encoded) -> tuple[Encoded, tuple[int, ...]]:
        """The model's own greedy output (generate, one beam), to teacher-force on."""
        eos = self._end()
        input_ids = self.runner.ids(src.ids)  # (1, S)
        generated = self.model.generate(  # type: ignore[operator]
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            do_sample=False,
            num_beams=1,
            max_new_tokens=self.default_new_tokens(len(src.ids)),
        )[0].tolist()  # start token first
        warnings = []
        if generated[-1] != eos:
            warnings.append(
                f"greedy output stopped after {len(generated) - 1} tokens without the end token"
            )
        return self._decoder_side(generated[:-1], warnings), tuple(generated[1:])

    def decode_plan(self, text: str) -> DecodePlan:
        """Greedy, beam search or sampling through the shared engine on the model's own cache;
        scores are the model's own log-probabilities. Of generation_config's processors only
        the token bans apply (bad_words_ids of one token, suppress_tokens)."""
        source, prefix, given = self._decode_inputs(text)
        room = self.max_tokens - len(prefix)  # decoder positions left after the prefix
        return DecodePlan(self._limits(room), lambda s: self._run(s, source, prefix, given))

    def _run(
        self,
        settings: DecodeSettings,
        source: tuple[int, ...] | None,
        prefix: tuple[int, ...],
        given: Encoded,
    ) -> DecodeRun:
        ablation_unsupported(settings.ablate)
        vocab = Vocabulary(self.names, self._end(), self._detokenize, banned_tokens(self.model))
        steps, hypotheses = search(
            HFStepper(self.model, self.kind), settings, source, prefix, vocab
        )
        params = settings.params(self.names)
        return DecodeRun(
            settings.strategy, params, given.tokens, hypotheses, steps, self.info, given.warnings
        )

    def _decode_inputs(self, text: str) -> tuple[tuple[int, ...] | None, tuple[int, ...], Encoded]:
        """(source ids or None, decoder prefix, what the record shows as the source)."""
        name, limit = self.info.name, self.max_tokens
        if self.kind == "encoder":
            raise InputError(f"{name} is an encoder-only model: it does not generate text")
        if self.kind == "decoder":
            prompt = encode_prompt(self.tokenizer, text, None, limit, name)
            if len(prompt.ids) >= limit:
                raise InputError(f"text fills all {limit} positions of {name}: no room to decode")
            return None, prompt.ids, prompt
        src = encode_source(self.tokenizer, text, limit, name)
        return src.ids, (start_id(self.model, self.tokenizer),), src

    def _limits(self, room: int) -> ModelLimits:
        kinds: tuple[HeadKind, ...] = (
            ("encoder", "decoder", "cross") if self.kind == "encoder-decoder" else ("decoder",)
        )
        return ModelLimits(
            max(1, room), self.vocab_ids, self.info.n_layers, self.info.n_heads, kinds, self.kind
        )

    def text_of(self, tokens: Sequence[str]) -> str:
        return self._detokenize([self.vocab_ids[t] for t in tokens if t in self.vocab_ids])

    def _detokenize(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))


def token_names(tokenizer: object, vocab_size: int) -> tuple[str, ...]:
    """Token string of every output id; ids the tokenizer lacks are named <id N>."""
    known = min(vocab_size, len(tokenizer))  # type: ignore[arg-type]
    names = tokenizer.convert_ids_to_tokens(list(range(known)))  # type: ignore[attr-defined]
    named = [str(n) if n is not None else f"<id {i}>" for i, n in enumerate(names)]
    return tuple(named + [f"<id {i}>" for i in range(known, vocab_size)])
