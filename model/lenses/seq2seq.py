"""A lens over our own encoder-decoder Transformer (character or word tokens)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from attnlens.model.budget import check_budget, trace_bytes
from attnlens.model.decoding.heads import HeadRef
from attnlens.model.decoding.loop import beam_texts, greedy_ids
from attnlens.model.decoding.net_steppers import TransformerStepper
from attnlens.model.decoding.request import DecodeRequest, ModelLimits, resolve
from attnlens.model.lenses.lens import (
    DecodePlan,
    TraceInput,
    check_target,
    check_text,
    ids_of_tokens,
    refuse_pair,
)
from attnlens.model.lenses.own import OwnLens
from attnlens.model.lenses.own_attribution import seq2seq_part
from attnlens.model.lenses.parts import Attribution, Evaluation, Samples, TaskModel
from attnlens.model.lenses.tensors import numpy_of, past_length
from attnlens.model.lenses.token_runs import (
    EXPERIMENT_BEAM,
    Search,
    TaskScores,
    TokenBatch,
    TokenRun,
)
from attnlens.model.net.attention import QKV
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.masks import padding_mask, subsequent_mask, target_mask
from attnlens.model.net.tokenizer import BOS, EOS
from attnlens.model.net.transformer import Decoded, Encoded, HeadMask, Transformer
from attnlens.model.training.batch import source_ids
from attnlens.model.training.evaluate import evaluate_task, greedy_batch
from attnlens.model.training.reports import Report
from attnlens.model.training.tasks import TASKS
from attnlens.model.training.tasks.base import Reading
from attnlens.record.errors import InputError
from attnlens.record.example import Example
from attnlens.record.trace import Kind, Trace


class Seq2SeqLens(OwnLens[Transformer]):
    """One of the bundled encoder-decoder models (§3), traced by return value."""

    architecture = "encoder-decoder"
    head_kinds: tuple[Kind, ...] = ("encoder_self", "decoder_self", "cross")
    experiment_batch = 128  # examples per forward pass in task_scores

    def loaded(self) -> None:
        """The source length it was trained on, and its task (which reads typed text)."""
        self.suffix_ids = (self.tokenizer.eos_id,)
        trained = self.meta.get("max_source_len", self.config.max_len - 1)
        if not isinstance(trained, int) or isinstance(trained, bool) or trained < 1:
            raise InputError(
                f"{self.folder.name}/config.json: max_source_len must be a whole number above 0, "
                f"got {trained!r}"
            )
        self.trained_len = trained
        task = self.meta.get("task")
        self.task = TASKS[task]() if task in TASKS else None
        if self.task is not None:
            self.example = self.task.example

    def build(self, config: TransformerConfig) -> Transformer:
        return Transformer(config)

    def source_ids(self, text: str) -> tuple[list[int], list[str], list[str]]:
        """Ids and token strings of the encoder input as the model reads it (its task may
        normalise typed text, and then says so), and warnings about it."""
        text = check_text(text)
        reading = Reading(text) if self.task is None else self.task.read(text)
        text = reading.text
        unit, n = self.tokenizer.unit, self.tokenizer.count(text)
        if n == 0:
            raise InputError(f"text is empty; type at least one {unit}")
        enc, warnings = self.encode(text, "text", self.max_tokens)
        warnings = [*reading.notes, *warnings]
        if n > self.trained_len:
            warnings.append(
                f"{self.info.name} was trained on at most {self.trained_len} {unit}s; "
                f"its output for {n} is unreliable"
            )
        return enc.ids + [self.tokenizer.eos_id], enc.tokens + [EOS], warnings

    def _weights(self, given_input: TraceInput) -> Trace:
        """Teacher-forced on target (text or tokens); without one, on the model's own greedy
        output."""
        text, target, pair = given_input.text, given_input.target, given_input.pair
        target_tokens = given_input.target_tokens
        given = check_target(target, target_tokens)
        refuse_pair(pair, self.name, "join the two texts in one")
        src, src_tokens, warnings = self.source_ids(text)
        c = self.config
        longest = self.max_tokens + 1
        if target is not None:
            longest = self.tokenizer.count(target) + 1
        if given is not None:
            given = given[:-1] if given and given[-1] == EOS else given
            if len(given) > self.max_tokens:
                raise InputError(
                    f"target has {len(given)} tokens but {self.name} takes at most "
                    f"{self.max_tokens}"
                )
            longest = len(given) + 1
        check_budget(trace_bytes(c.N, c.h, len(src), longest), "trace")
        if given is not None:
            ids = ids_of_tokens(given, self.tokenizer.index, self.name)
            return self._teacher_forced(src, src_tokens, ids, list(given), warnings)
        if target is None:  # the output `decode` gives, its steps not recorded
            stepper, start = TransformerStepper(self.net), [self.tokenizer.bos_id]
            target = self.greedy_text(stepper, self.limits, src, start)
        enc, target_warnings = self.encode(target, "target", self.max_tokens)
        return self._teacher_forced(
            src, src_tokens, enc.ids, enc.tokens, warnings + target_warnings
        )

    def decode_plan(self, text: str) -> DecodePlan:
        """Greedy, beam search or sampling with the key/value cache, every step recorded."""
        src, src_tokens, warnings = self.source_ids(text)
        stepper, prefix = TransformerStepper(self.net, carried=True), [self.tokenizer.bos_id]
        return DecodePlan(
            self.limits,
            lambda settings: self.run(stepper, settings, src, prefix, src_tokens, warnings),
        )

    def _attribution(self) -> Attribution:
        return seq2seq_part(self)

    def _task_model(self) -> TaskModel | None:
        """A model of one of our tasks: its references and scores, evaluation and inputs."""
        task = self.task
        if task is None:
            return None
        return TaskModel(task.name, task.reference, self._task_scores, self._task_scores_many)

    def _evaluation(self) -> Evaluation | None:
        return None if self.task is None else Evaluation(self._evaluate)

    def _samples(self) -> Samples | None:
        return None if self.task is None else Samples(self._sample_texts)

    def _evaluate(self, n: int, seed: int, suite: str = "held-out") -> Report:
        assert self.task is not None, "evaluation is a part of task models only"
        return evaluate_task(self.name, self.net, self.tokenizer, self.task, n, seed, suite)

    def _sample_texts(self, n: int, seed: int) -> list[str]:
        assert self.task is not None, "samples are a part of task models only"
        return [e.source for e in self.task.examples(n, seed)]

    def _run_tokens(self, batch: TokenBatch, ablate: Sequence[HeadRef] = ()) -> TokenRun:
        """Encode each source, teacher-force its tokens (start token first), heads ablated."""
        if batch.source is None or len(batch.source) != len(batch.tokens):
            raise InputError(f"{self.name} is an encoder-decoder: give one source per sequence")
        src, src_len = self.padded(batch.source, "source")  # (B, S)
        tgt, tgt_len = self.padded(batch.tokens, "tokens")  # (B, T)
        self.check_batch_budget(src.size(0), src.size(1), tgt.size(1))
        head_mask = TransformerStepper(self.net).head_mask(self.checked_heads(ablate))
        pad, net = self.tokenizer.pad_id, self.net
        src_mask = padding_mask(src, pad)  # (B, 1, S)
        with torch.inference_mode():
            encoded = net.encode(src, src_mask, head_mask)
            memory_kv = net.memory_kv(encoded.memory)
            decoded = net.decode(
                memory_kv, src_mask, tgt, target_mask(tgt, pad), head_mask=head_mask
            )
            logprobs = net.log_probs(decoded.hidden)  # (B, T, V)
        given = logprobs[:, :-1].gather(-1, tgt[:, 1:].unsqueeze(-1)).squeeze(-1)  # (B, T-1)
        return TokenRun(
            past_length(numpy_of(encoded.attention.transpose(0, 1)), src_len, 3, np.nan),
            past_length(numpy_of(decoded.self_attention.transpose(0, 1)), tgt_len, 3, np.nan),
            past_length(numpy_of(decoded.cross_attention.transpose(0, 1)), tgt_len, 3, np.nan),
            past_length(numpy_of(given), tgt_len - 1, 1, np.nan),
            past_length(logprobs.argmax(-1).cpu().numpy(), tgt_len, 1, -1),
        )

    def _run_ablations(
        self, batch: TokenBatch, ablations: Sequence[Sequence[HeadRef]]
    ) -> list[TokenRun]:
        """The batch once per set of ablated heads, the sets side by side in one forward pass
        (a head mask per row; the source encoded once for every set that ablates no encoder
        head), attention left out."""
        if batch.source is None or len(batch.source) != len(batch.tokens):
            raise InputError(f"{self.name} is an encoder-decoder: give one source per sequence")
        src, _ = self.padded(batch.source, "source")  # (B, S)
        tgt, tgt_len = self.padded(batch.tokens, "tokens")  # (B, T)
        B, pad, net, runs = src.size(0), self.tokenizer.pad_id, self.net, []
        src_mask = padding_mask(src, pad)  # (B, 1, S)
        for group in self.ablation_groups(ablations, B):
            k = len(group)
            self.check_batch_budget(k * B, src.size(1), tgt.size(1))
            head_mask = TransformerStepper(net).rows_mask(group, B)  # (N, k·B, h) per kind
            rows_tgt = tgt.repeat(k, 1)  # (k·B, T)
            with torch.inference_mode():
                memory = self._memory(src, src_mask, group, head_mask)  # (k·B, S, d_model)
                decoded = net.decode(net.memory_kv(memory), src_mask.repeat(k, 1, 1), rows_tgt,
                                     target_mask(rows_tgt, pad), head_mask=head_mask)  # fmt: skip
                logprobs = net.log_probs(decoded.hidden)  # (k·B, T, V)
            given = numpy_of(logprobs[:, :-1].gather(-1, rows_tgt[:, 1:].unsqueeze(-1)))
            top = logprobs.argmax(-1).cpu().numpy()  # (k·B, T)
            for i in range(k):
                mine = slice(i * B, (i + 1) * B)
                runs.append(TokenRun(
                    None, None, None, past_length(given[mine, :, 0], tgt_len - 1, 1, np.nan),
                    past_length(top[mine], tgt_len, 1, -1),
                ))  # fmt: skip
        return runs

    def _memory(
        self,
        src: torch.Tensor,
        src_mask: torch.Tensor,
        group: Sequence[Sequence[HeadRef]],
        head_mask: HeadMask,
    ) -> torch.Tensor:
        """The memory (k·B, S, d_model) of src (B, S) for each of the k sets of ablated heads:
        encoded once for all the sets that ablate no encoder head, once per set that does."""
        B, net = src.size(0), self.net
        own = [i for i, ablate in enumerate(group) if any(r.kind == "encoder_self" for r in ablate)]
        parts: dict[int, torch.Tensor] = {}
        if own:
            rows = torch.cat([torch.arange(i * B, (i + 1) * B) for i in own])  # (m·B,)
            mask = HeadMask(encoder=head_mask.encoder[:, rows])  # type: ignore[index]
            memory = net.encode(src.repeat(len(own), 1), src_mask.repeat(len(own), 1, 1), mask)
            parts = {i: memory.memory[j * B : (j + 1) * B] for j, i in enumerate(own)}
        if len(own) < len(group):
            clean = net.encode(src, src_mask).memory  # (B, S, d_model)
            parts |= {i: clean for i in range(len(group)) if i not in parts}
        return torch.cat([parts[i] for i in range(len(group))])

    def _task_scores_many(
        self,
        examples: Sequence[Example],
        ablations: Sequence[Sequence[HeadRef]],
        search: Search = "greedy",
    ) -> list[TaskScores]:
        """`task_scores` for each set of ablated heads, side by side: the teacher-forced runs
        and greedy answers of every set in one batch (a head mask per row), beam search over
        every example of a set at once (`beam_texts`, the step loop's decisions per example)."""
        tok, sets = self.tokenizer, [self.checked_heads(a) for a in ablations]
        parts: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in sets]
        for i in range(0, len(examples), self.experiment_batch):
            chunk = examples[i : i + self.experiment_batch]
            targets = [(tok.bos_id, *tok.encode(e.target).ids, tok.eos_id) for e in chunk]
            sources = [self._token_ids(e.source) for e in chunk]
            runs = self._run_ablations(TokenBatch(targets, sources), sets)
            answers = self._answers_many(chunk, sets, search)
            counts = np.array([len(t) - 1 for t in targets])
            for part, run, outputs in zip(parts, runs, answers, strict=True):
                assert run.logprobs is not None
                exact = np.array([o == e.target for o, e in zip(outputs, chunk, strict=True)])
                part.append((exact, np.nansum(run.logprobs, axis=1), counts))
        return [TaskScores(*(np.concatenate(p) for p in zip(*part, strict=True))) for part in parts]

    def _answers_many(
        self, chunk: Sequence[Example], sets: Sequence[list[HeadRef]], search: Search
    ) -> list[list[str]]:
        """The decoded output of each example's source for each set of ablated heads."""
        tok, vocab, prefix = self.tokenizer, self.vocabulary(), [self.tokenizer.bos_id]
        room = [min(self.max_tokens, tok.count(e.target) + 2) for e in chunk]
        stepper = TransformerStepper(self.net)
        if search == "beam":  # every example of a set at once, each searched as decode would
            sources = [self.source_ids(e.source)[0] for e in chunk]
            out = []
            for refs in sets:
                ablate = [str(r) for r in refs]
                request = DecodeRequest.from_kwargs(
                    strategy="beam", beam_size=EXPERIMENT_BEAM, ablate=ablate, max_len=max(room)
                )
                first = stepper.start_batch(sources, prefix, refs)
                settings = resolve(request, self.limits)
                out.append(beam_texts(stepper, first, prefix, vocab, settings, room))
            return out
        src, _ = self.padded([source_ids(tok, e.source) for e in chunk], "source")  # (B, S)
        src_mask, B, out = padding_mask(src, tok.pad_id), len(chunk), []
        for group in self.ablation_groups(sets, B):
            head_mask = stepper.rows_mask(group, B)  # (N, k·B, h) per kind
            with torch.inference_mode():
                memory = self._memory(src, src_mask, group, head_mask)  # (k·B, S, d_model)
            first = stepper.start_encoded(memory, src_mask.repeat(len(group), 1, 1), prefix,
                                          head_mask)  # fmt: skip
            ids = greedy_ids(stepper, first, prefix, vocab, max(room))
            texts = [vocab.detokenize(i) for i in ids]
            out += [texts[j * B : (j + 1) * B] for j in range(len(group))]
        return out

    def _task_scores(
        self, examples: Sequence[Example], ablate: Sequence[HeadRef] = (), search: Search = "greedy"
    ) -> TaskScores:
        """Greedy answers come from batches (as `attnlens eval` decodes), beam search from the
        shared step loop one example at a time; both with the same head mask, and both stop
        two tokens past the reference's length (an answer still going there is not it)."""
        refs, tok = self.checked_heads(ablate), self.tokenizer
        parts = []
        for i in range(0, len(examples), self.experiment_batch):
            chunk = examples[i : i + self.experiment_batch]
            targets = [(tok.bos_id, *tok.encode(e.target).ids, tok.eos_id) for e in chunk]
            sources = [self._token_ids(e.source) for e in chunk]
            run = self._run_tokens(TokenBatch(targets, sources), refs)
            assert run.logprobs is not None
            outputs = self._answers(chunk, refs, search)
            exact = np.array([o == e.target for o, e in zip(outputs, chunk, strict=True)])
            counts = np.array([len(t) - 1 for t in targets])
            parts.append((exact, np.nansum(run.logprobs, axis=1), counts))
        exact, loglik, counts = (np.concatenate(p) for p in zip(*parts, strict=True))
        return TaskScores(exact, loglik, counts)

    def _answers(self, chunk: Sequence[Example], refs: list[HeadRef], search: Search) -> list[str]:
        """The decoded output of each example's source with refs ablated."""
        tok = self.tokenizer
        room = [min(self.max_tokens, tok.count(e.target) + 2) for e in chunk]
        if search == "beam":
            ablate = [str(r) for r in refs]
            return [
                self.decode(e.source, "beam", beam_size=EXPERIMENT_BEAM, ablate=ablate,
                            max_len=n).output_text
                for e, n in zip(chunk, room, strict=True)
            ]  # fmt: skip
        banned = self.vocabulary().banned  # as the step loop bans them
        return greedy_batch(self.net, tok, [e.source for e in chunk], max(room), refs, banned)

    @property
    def limits(self) -> ModelLimits:
        """What decoding may ask of this model: outputs up to max_tokens, every kind of head."""
        c = self.config
        arch = self.info.architecture
        return ModelLimits(self.max_tokens, self.tokenizer.index, c.N, c.h, self.head_kinds, arch)

    @torch.inference_mode()
    def forward(
        self, src: torch.Tensor, tgt_in: torch.Tensor, keep_qkv: bool = False
    ) -> tuple[Encoded, Decoded, torch.Tensor, torch.Tensor]:
        """Teacher-forced pass over src (1, S) and tgt_in (1, T): what each stack returned, and
        the masks they applied: src_mask (1, 1, S), tgt_mask (1, T, T).

        One sequence has no padding, so no token is masked as padding: a <pad> a record holds
        (forced, or read back from a decode record) is attended to here exactly as decoding
        attended to it."""
        net = self.net
        src_mask = torch.ones(1, 1, src.size(1), dtype=torch.bool, device=self.device)
        tgt_mask = subsequent_mask(tgt_in.size(1), self.device)  # (1, T, T)
        encoded = net.encode(src, src_mask, keep_qkv=keep_qkv)
        memory_kv = net.memory_kv(encoded.memory)
        decoded = net.decode(memory_kv, src_mask, tgt_in, tgt_mask, keep_qkv=keep_qkv)
        return encoded, decoded, src_mask, tgt_mask

    def _teacher_forced(
        self,
        src: list[int],
        src_tokens: list[str],
        tgt: list[int],
        tgt_tokens: list[str],
        warnings: list[str],
    ) -> Trace:
        tok, net = self.tokenizer, self.net
        src_t = torch.tensor([src], device=self.device)  # (1, S)
        tgt_in = torch.tensor([[tok.bos_id, *tgt]], device=self.device)  # (1, T)
        encoded, decoded, src_mask, tgt_mask = self.forward(src_t, tgt_in)
        with torch.inference_mode():
            logprobs = net.log_probs(decoded.hidden)[0]  # (T, V)
        nxt = torch.tensor([*tgt, tok.eos_id], device=self.device)  # (T,)
        S, T = src_t.size(1), tgt_in.size(1)
        return Trace(
            model=self.info,
            src_tokens=tuple(src_tokens),
            tgt_tokens=(BOS, *tgt_tokens),
            encoder_self=numpy_of(encoded.attention[:, 0]),  # (N, h, S, S)
            decoder_self=numpy_of(decoded.self_attention[:, 0]),  # (N, h, T, T)
            cross=numpy_of(decoded.cross_attention[:, 0]),  # (N, h, T, S)
            encoder_self_mask=src_mask[0].expand(S, S).cpu().numpy(),
            decoder_self_mask=tgt_mask[0].cpu().numpy(),
            cross_mask=src_mask[0].expand(T, S).cpu().numpy(),
            positional_encoding=numpy_of(net.positional(0, max(S, T))),
            tgt_logprobs=numpy_of(logprobs.gather(-1, nxt.unsqueeze(-1)).squeeze(-1)),
            warnings=tuple(warnings),
            positional_scheme="sinusoidal",
        )

    def attention_inputs(self, trace: Trace, kind: Kind, layer: int) -> tuple[QKV, np.ndarray]:
        src, tgt = self.ids_of(trace.src_tokens), self.ids_of(trace.tgt_tokens)
        encoded, decoded, src_mask, tgt_mask = self.forward(src, tgt, keep_qkv=True)
        S, T = src.size(1), tgt.size(1)
        chosen = {
            "encoder_self": (encoded.qkv, src_mask[0].expand(S, S)),
            "decoder_self": (decoded.self_qkv, tgt_mask[0]),
            "cross": (decoded.cross_qkv, src_mask[0].expand(T, S)),
        }
        qkvs, mask = chosen[kind]
        assert qkvs is not None, "keep_qkv=True returns every layer's Q, K, V"
        return qkvs[layer], mask.cpu().numpy().astype(bool)
