"""HFLens: any Hugging Face transformers model, traced into the same records as our own.

Decoding runs attnlens' one step loop on the model's own cache, with the processors of the
model's generation config (`processors.py`) and `generate`'s length normalisation, so greedy
and beam search give what `generate` gives; a trace without a target is teacher-forced on that
same greedy output.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from attnlens.model.budget import check_budget, decode_bytes, trace_bytes
from attnlens.model.decoding.heads import HeadRef
from attnlens.model.decoding.loop import Vocabulary, search
from attnlens.model.decoding.request import DecodeSettings, ModelLimits
from attnlens.model.lenses.hf import batch as batches
from attnlens.model.lenses.hf.ablation import output_projections
from attnlens.model.lenses.hf.architecture import config_limit, model_info
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
from attnlens.model.lenses.hf.next_tokens import prompt_next_tokens
from attnlens.model.lenses.hf.processors import (
    applied_settings,
    build_processors,
    refuse,
    refused_settings,
)
from attnlens.model.lenses.hf.recording import Widths, scores_bytes, traced, weights_bytes
from attnlens.model.lenses.hf.stepper import HFStepper
from attnlens.model.lenses.hf.tokens import display_tokens
from attnlens.model.lenses.hf.tracing import (
    decoder_trace,
    encoder_trace,
    runner_for,
    seq2seq_trace,
)
from attnlens.model.lenses.lens import (
    DecodePlan,
    Lens,
    RecordMode,
    check_mode,
    check_target,
    check_text,
    forced_past_end,
    ids_of_tokens,
    refuse_pair,
)
from attnlens.model.lenses.token_runs import TokenBatch, TokenRun, TokenSpace, without_attention
from attnlens.model.training.corpus import load_corpus
from attnlens.record.decode import DecodeRun
from attnlens.record.errors import InputError
from attnlens.record.next_tokens import NextTokens
from attnlens.record.trace import Kind, Trace

MIN_DEFAULT_NEW = 16  # without a length in the generation config: twice the input, at least this


class HFLens(Lens):
    """A Hugging Face model (local folder or hub id) with eager attention, traced by return
    value. Shared between threads: nothing changes after construction."""

    token_runs = True

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
        self.model, self.tokenizer, self.kind = loaded.model, loaded.tokenizer, loaded.kind
        self.device = device
        self.info = model_info(name, loaded.kind, loaded.config)
        self.description = description or (
            f"{loaded.config.model_type} {loaded.kind} model ({origin}), "
            f"{self.info.n_layers} layers × {self.info.n_heads} heads"
        )
        self.example = "the cat sat on the mat because it was tired"
        self.runner = runner_for(loaded.model, loaded.tokenizer, loaded.kind, self.info, device)
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
    def reads_pairs(self) -> bool:
        return self.kind == "encoder"

    def display_tokens(self, tokens: Sequence[str]) -> list[str]:
        """Readable forms of this model's token strings (Ġ, ▁ and ## markers handled)."""
        return display_tokens(tokens, self.byte_level)

    def trace(
        self,
        text: str,
        target: str | None = None,
        *,
        target_tokens: Sequence[str] | None = None,
        pair: str | None = None,
        record: RecordMode = "weights",
    ) -> Trace:
        """Teacher-forced on target (text or tokens); an encoder-decoder without one, on its
        own greedy output (the Decode page's greedy run, processors of its generation config
        included). A sentence pair goes to an encoder-only model with its segment ids. record:
        which record is kept (model/lenses/hf/recording.py: weights, scores or auto)."""
        name, limit = self.info.name, self.max_tokens
        mode = check_mode(record)
        check_text(text)
        given = check_target(target, target_tokens)
        if pair is not None:
            check_text(pair, "pair")
        if self.kind == "encoder":
            if target is not None or given is not None:
                raise InputError(f"{name} is an encoder-only model: it takes no target")
            src = encode_source(self.tokenizer, text, limit, name, pair)
            return self._traced(lambda k: encoder_trace(self.runner, src, k), mode, len(src.ids))
        refuse_pair(pair, name, f"it is a {self.kind} model: join the two texts in one")
        if self.kind == "decoder":
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

    def _end(self) -> int:
        if not self.ends:
            raise InputError(f"{self.info.name}: the config names no end token")
        return self.ends[0]

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

    def default_new_tokens(self, source_len: int) -> int:
        """How many tokens to generate when the request names no length: the generation
        config's own length when it states one, else twice the input and at least 16."""
        stated = {} if self.generation is None else self.generation.to_diff_dict()
        if stated.get("max_new_tokens"):
            wanted = int(stated["max_new_tokens"])
        elif stated.get("max_length"):
            fed = 1 if self.kind == "encoder-decoder" else source_len  # generate counts these
            wanted = int(stated["max_length"]) - fed
        else:
            wanted = max(MIN_DEFAULT_NEW, 2 * source_len)
        return max(1, min(self.max_tokens - 1, wanted))

    def decode_plan(self, text: str) -> DecodePlan:
        """Greedy, beam search or sampling through the shared loop on the model's own cache;
        scores are the model's own log-probabilities, choices are those of `generate`."""
        refuse(self.info.name, refused_settings(self.generation))
        source, prefix, given = self._decode_inputs(text)
        room = self.max_tokens - len(prefix)  # decoder positions left after the prefix
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
        steps, hypotheses = search(
            HFStepper(self.model, self.kind, self.projections), settings, source, prefix, vocab
        )
        params = settings.params(self.names)
        warnings = (*given.warnings, *forced_past_end(settings, steps, self.names))
        return DecodeRun(
            settings.strategy, params, given.tokens, hypotheses, steps, self.info,
            warnings, tuple(self.names[i] for i in prefix),
        )  # fmt: skip

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

    def _limits(self, room: int, wanted: int) -> ModelLimits:
        kinds: tuple[Kind, ...] = (
            ("encoder_self", "decoder_self", "cross")
            if self.kind == "encoder-decoder"
            else ("decoder_self",)
        )
        generation = self.generation
        return ModelLimits(
            max(1, room), self.vocab_ids, self.info.n_layers, self.info.n_heads, kinds,
            self.kind, default_max_len=min(max(1, room), wanted), length_norm="power",
            default_length_penalty=_length_penalty(generation),
            early_stopping=getattr(generation, "early_stopping", False) or False,
            generation_config=applied_settings(generation),
            shapes={kind: self.info.shape(kind) for kind in ("decoder_self", "cross")},
        )  # fmt: skip

    # token-id runs for the head experiments; heads ablated in a private copy (ablation.py)

    def fingerprint(self) -> str:
        folder = getattr(self, "folder", None)  # None: a model held in memory (attnlens.wrap)
        return batches.fingerprint(self.info.name, folder, self.model)

    def token_space(self) -> TokenSpace:
        start = start_id(self.model, self.tokenizer) if self.kind == "encoder-decoder" else None
        return batches.token_space(self.tokenizer, self.kind, self.names, start)

    def token_ids(self, text: str) -> tuple[int, ...]:
        name, limit = self.info.name, self.max_tokens
        if self.kind == "decoder":
            return encode_prompt(self.tokenizer, text, None, limit, name).ids
        return encode_source(self.tokenizer, text, limit, name).ids

    def why_no_ablation(self) -> str | None:
        return self.projections.reason

    def run_tokens(self, batch: TokenBatch, ablate: Sequence[HeadRef] = ()) -> TokenRun:
        """One forward pass over the batch; ablated heads zeroed in a private copy of the model
        made for this call (the shared model is never changed)."""
        self._check_batch(batch)
        model = self.projections.without(self.model, ablate)
        return batches.run_tokens(
            model, self.kind, batch, len(self.names), self.max_tokens, self.device
        )

    def run_ablations(
        self, batch: TokenBatch, ablations: Sequence[Sequence[HeadRef]]
    ) -> list[TokenRun]:
        """A forward pass per set of ablated heads, all in one private copy of the model made
        for this call (its output projections set for each set in turn), attention left out."""
        self._check_batch(batch)
        vocab, limit, device = len(self.names), self.max_tokens, self.device
        model_type = str(self.model.config.model_type)
        resumable = self.kind == "encoder" and self.projections.resumable(model_type)
        runs, inputs = [], {}  # inputs: layer l → its input, unablated (for this call only)
        variants = self.projections.variants(self.model, ablations)
        for ablate, model in zip(ablations, variants, strict=True):
            first = min((r.layer for r in ablate), default=0)
            if not resumable or model is self.model or first == 0:
                runs.append(batches.run_tokens(model, self.kind, batch, vocab, limit, device))
                continue
            if first not in inputs:  # the layers before the first ablated one, as they are
                with self.projections.layers(model, model_type, slice(0, first), None):
                    inputs[first] = batches.last_hidden(model, batch, vocab, limit, device)
            with self.projections.layers(model, model_type, slice(first, None), inputs[first]):
                runs.append(batches.run_tokens(model, self.kind, batch, vocab, limit, device))
        return [without_attention(run) for run in runs]

    def _check_batch(self, batch: TokenBatch) -> None:
        rows = max(len(r) for r in [*batch.tokens, *(batch.source or [])]) if batch.tokens else 0
        check_budget(len(batch.tokens) * trace_bytes(
            self.info.n_layers, self.info.n_heads, rows, rows), "experiment batch",
            "use fewer or shorter sequences")  # fmt: skip

    def sample_texts(self, n: int, seed: int) -> list[str]:
        """English sentences: held-out help text that ships with Python (nothing to fetch)."""
        held_out = list(load_corpus().held_out)
        random.Random(seed).shuffle(held_out)
        fitting = []
        for text in held_out:  # as many as fit within the model's positions
            if len(self.tokenizer(text, add_special_tokens=True)["input_ids"]) < self.max_tokens:
                fitting.append(text)
                if len(fitting) == n:
                    break
        return fitting

    def next_tokens(self, text: str, k: int = 3) -> NextTokens:
        if self.kind != "decoder":
            return super().next_tokens(text, k)
        return prompt_next_tokens(self.model, self.tokenizer, check_text(text), k,
                                  self.max_tokens, self.info.name, self.names)  # fmt: skip

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


def _length_penalty(generation: object) -> float:
    """The config's length penalty; unset (None in transformers 5) is generate's default 1.0."""
    value = getattr(generation, "length_penalty", None)
    return 1.0 if value is None else float(value)
