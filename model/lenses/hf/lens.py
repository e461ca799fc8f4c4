"""HFLens: any Hugging Face transformers model, traced into the same records as our own.

Decoding (decoding.py) runs attnlens' one step loop on the model's own cache, so greedy and beam
search give what `generate` gives; a trace without a target is teacher-forced on that same greedy
output. What the head experiments run on, and the next tokens, are in runs.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from attnlens.model.lenses.hf import batch as batches
from attnlens.model.lenses.hf.ablation import output_projections
from attnlens.model.lenses.hf.architecture import config_limit, model_info
from attnlens.model.lenses.hf.attributing import hf_part
from attnlens.model.lenses.hf.decoding import HFDecoding
from attnlens.model.lenses.hf.encoding import (
    Encoded,
    check_ids,
    encode_prompt,
    encode_source,
    encode_target,
    end_ids,
    start_id,
)
from attnlens.model.lenses.hf.loading import Loaded, load_folder, resolve
from attnlens.model.lenses.hf.recording import Widths, scores_bytes, traced, weights_bytes
from attnlens.model.lenses.hf.runs import HFRuns
from attnlens.model.lenses.hf.tokens import display_tokens
from attnlens.model.lenses.hf.tracing import (
    decoder_trace,
    encoder_trace,
    runner_for,
    seq2seq_trace,
)
from attnlens.model.lenses.lens import (
    Capabilities,
    Lens,
    RecordMode,
    TraceInput,
    check_mode,
    check_target,
    check_text,
    ids_of_tokens,
    refuse_pair,
)
from attnlens.model.lenses.parts import Ablation, Predictor, Samples, TokenRuns
from attnlens.record.errors import InputError
from attnlens.record.trace import Trace


class HFLens(HFDecoding, HFRuns, Lens):
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
        self.folder = resolve(str(source), allow_pickle, cache_dir)
        loaded = load_folder(self.folder, device, allow_pickle)
        self._adopt(loaded, device, name or str(source), description, str(source))

    def _adopt(
        self, loaded: Loaded, device: torch.device, name: str, description: str, origin: str
    ) -> None:
        """Everything the lens keeps, from a model loaded here or already in memory (wrap.py)."""
        self.model, self.tokenizer = loaded.model, loaded.tokenizer
        self.architecture, self.device = loaded.architecture, device
        self.info = model_info(name, loaded.architecture, loaded.config)
        self.description = description or (
            f"{loaded.config.model_type} {loaded.architecture} model ({origin}), "
            f"{self.info.n_layers} layers × {self.info.n_heads} heads"
        )
        self.example = "the cat sat on the mat because it was tired"
        self.runner = runner_for(
            loaded.model, loaded.tokenizer, loaded.architecture, self.info, device
        )
        self.byte_level = self.runner.byte_level
        tokenizer_limit = getattr(loaded.tokenizer, "model_max_length", None)
        self._max_tokens = self.runner.positions.limit or config_limit(
            loaded.config, tokenizer_limit
        )
        vocab_size = int(loaded.model.config.get_text_config().vocab_size)
        check_ids(loaded.model, loaded.tokenizer, vocab_size, self.info.name)
        self.ends = end_ids(loaded.model, loaded.tokenizer)
        self.names = token_names(loaded.tokenizer, vocab_size)
        self.vocab_ids = {name: i for i, name in reversed(list(enumerate(self.names)))}
        self.generation = getattr(loaded.model, "generation_config", None)
        self.projections = output_projections(loaded.model, loaded.config.model_type, self.info)

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    @property
    def capabilities(self) -> Capabilities:
        """Token-id runs and samples on every model; heads ablated where its W^O can be found
        (ablation.py); next tokens on a decoder-only model; which heads wrote a token on a
        decoder whose layout is stated (attribution.py)."""
        decoder_only = self.architecture == "decoder"
        ablates = self.projections.reason is None
        attribution, why = hf_part(self)
        return Capabilities.of(
            self.info,
            reads_pairs=self.architecture == "encoder",  # BERT-style segment ids
            predictor=Predictor(self._next_tokens) if decoder_only else None,
            token_runs=TokenRuns(self._token_space, self._token_ids, self._run_tokens),
            ablation=Ablation(self._run_tokens, self._run_ablations) if ablates else None,
            samples=Samples(self._sample_texts),
            attribution=attribution,
            reasons={"ablation": self.projections.reason or "", "attribution": why},
        )

    def display_tokens(self, tokens: Sequence[str]) -> list[str]:
        """Readable forms of this model's token strings (Ġ, ▁ and ## markers handled)."""
        return display_tokens(tokens, self.byte_level)

    def _trace(self, given_input: TraceInput, record: RecordMode) -> Trace:
        """Teacher-forced on target (text or tokens); an encoder-decoder without one, on its
        own greedy output (the Decode page's greedy run, processors of its generation config
        included). A sentence pair goes to an encoder-only model with its segment ids. record:
        which record is kept (model/lenses/hf/recording.py: weights, scores or auto)."""
        text, target, pair = given_input.text, given_input.target, given_input.pair
        target_tokens = given_input.target_tokens
        name, limit = self.info.name, self.max_tokens
        mode = check_mode(record)
        check_text(text)
        given = check_target(target, target_tokens)
        if pair is not None:
            check_text(pair, "pair")
        if self.architecture == "encoder":
            if target is not None or given is not None:
                raise InputError(f"{name} is an encoder-only model: it takes no target")
            src = encode_source(self.tokenizer, text, limit, name, pair)
            return self._traced(lambda k: encoder_trace(self.runner, src, k), mode, len(src.ids))
        refuse_pair(pair, name, f"it is a {self.architecture} model: join the two texts in one")
        if self.architecture == "decoder":
            return self._decoder_trace(text, target, given, mode)
        src = encode_source(self.tokenizer, text, limit, name)
        if given is not None:
            dec, next_ids = self._given(given)
        else:
            dec, next_ids = self._greedy(text) if target is None else self._forced(target)
        return self._traced(
            lambda k: seq2seq_trace(self.runner, src, dec, next_ids, k),
            mode,
            len(src.ids),
            len(dec.ids),
        )

    def _decoder_trace(
        self, text: str, target: str | None, given: Sequence[str] | None, mode: RecordMode
    ) -> Trace:
        """A decoder-only model's trace: the prompt, then the target as text or tokens."""
        name, limit = self.info.name, self.max_tokens
        prompt = encode_prompt(self.tokenizer, text, target, limit, name)
        end = self.ends[0] if self.ends else None
        if given is not None:
            ids, end = self._split_end(given, end)
            prompt = self._decoder_side((*prompt.ids, *ids), prompt.warnings)
            if len(prompt.ids) > limit:
                raise InputError(
                    f"text with target has {len(prompt.ids)} tokens but {name} takes at most "
                    f"{limit}"
                )
        run = lambda k: decoder_trace(self.runner, prompt, end, k)  # noqa: E731
        return self._traced(run, mode, 0, len(prompt.ids))

    def _traced(self, run: Callable[[bool], Trace], mode: RecordMode, S: int, T: int = 0) -> Trace:
        """run(scores) within the record budget; the longest input that fits is counted on
        the side the text is on (the source, or a decoder-only model's prompt)."""
        widths, info = Widths.of(self.model.config, self.info), self.info
        on_source = S > 0

        def sized(scores: bool, n: int) -> int:
            s, t = (n, T) if on_source else (S, n)
            return scores_bytes(info, widths, s, t) if scores else weights_bytes(info, s, t)

        return traced(run, mode, sized, S if on_source else T, self.max_tokens)

    def _split_end(self, tokens: Sequence[str], end: int | None) -> tuple[list[int], int | None]:
        """Token strings to ids; a trailing end token is the last prediction, not an input."""
        ids = ids_of_tokens(tokens, self.vocab_ids, self.info.name)
        if ids and ids[-1] in self.ends:
            return ids[:-1], ids[-1]
        return ids, end

    def _given(self, tokens: Sequence[str]) -> tuple[Encoded, tuple[int, ...]]:
        """Decoder inputs [start, tokens...] and next tokens [tokens..., end], the tokens read
        exactly as given (a decode record's output_tokens: no re-tokenizing)."""
        ids, end = self._split_end(tokens, self._end())
        assert end is not None
        if len(ids) + 1 > self.max_tokens:
            raise InputError(
                f"target has {len(ids) + 1} tokens but {self.info.name} takes at most "
                f"{self.max_tokens}"
            )
        start = start_id(self.model, self.tokenizer)
        return self._decoder_side((start, *ids)), (*ids, end)

    def _decoder_side(self, ids: Sequence[int], warnings: Sequence[str] = ()) -> Encoded:
        tokens = [self.names[i] for i in ids]
        return Encoded(tuple(ids), tuple(tokens), tuple(warnings))

    def _forced(self, target: str) -> tuple[Encoded, tuple[int, ...]]:
        """Decoder inputs [start, target...] and next tokens [target..., end]."""
        eos = self._end()
        tgt = encode_target(self.tokenizer, target, self.max_tokens, self.info.name, eos)
        start = start_id(self.model, self.tokenizer)
        return self._decoder_side((start, *tgt.ids), tgt.warnings), (*tgt.ids, eos)

    def _greedy(self, text: str) -> tuple[Encoded, tuple[int, ...]]:
        """Decoder inputs and next tokens of the model's own greedy output (the Decode page's):
        the prefix and every generated token but the last as inputs, the generated tokens as
        targets, so the last target is the end token when greedy produced it."""
        run = self.decode(text)
        fed = [self.vocab_ids[t] for t in (*run.prefix, *run.output_tokens)]
        warnings = [] if run.best.finished else [
            f"greedy output stopped after {len(run.output_tokens)} tokens without the end token"
        ]  # fmt: skip
        return self._decoder_side(fed[:-1], warnings), tuple(fed[len(run.prefix) :])

    def fingerprint(self) -> str:
        folder = getattr(self, "folder", None)  # None: a model held in memory (attnlens.wrap)
        return batches.fingerprint(self.info.name, folder, self.model)

    def text_of(self, tokens: Sequence[str]) -> str:
        return self._detokenize([self.vocab_ids[t] for t in tokens if t in self.vocab_ids])


def token_names(tokenizer: object, vocab_size: int) -> tuple[str, ...]:
    """Token string of every output id; ids the tokenizer lacks are named <id N>."""
    known = min(vocab_size, len(tokenizer))  # type: ignore[arg-type]
    names = tokenizer.convert_ids_to_tokens(list(range(known)))  # type: ignore[attr-defined]
    named = [str(n) if n is not None else f"<id {i}>" for i, n in enumerate(names)]
    return tuple(named + [f"<id {i}>" for i in range(known, vocab_size)])
