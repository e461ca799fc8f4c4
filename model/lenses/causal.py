"""The lens of our decoder-only character language model (`lm`).

TEXT goes on the decoder side after the start token (docs/python.md, the trace record);
decoding continues it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import torch

from attnlens.model.budget import check_budget, trace_bytes
from attnlens.model.decoding.heads import HeadRef
from attnlens.model.decoding.net_steppers import (
    CausalStepper,
    causal_head_mask,
    causal_rows_mask,
)
from attnlens.model.decoding.request import ModelLimits
from attnlens.model.lenses.lens import (
    Capabilities,
    DecodePlan,
    TraceInput,
    check_target,
    check_text,
    ids_of_tokens,
    refuse_pair,
)
from attnlens.model.lenses.next_tokens import check_logits_budget, check_top, top_next
from attnlens.model.lenses.own import OwnLens
from attnlens.model.lenses.own_attribution import causal_part
from attnlens.model.lenses.parts import Attribution, Evaluation, Predictor, Samples
from attnlens.model.lenses.tensors import numpy_of, past_length
from attnlens.model.lenses.token_runs import TokenBatch, TokenRun
from attnlens.model.net.attention import QKV
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.decoder_only import CausalOutput, DecoderOnlyTransformer
from attnlens.model.net.masks import causal_mask, target_mask
from attnlens.model.net.tokenizer import BOS, EOS, CharTokenizer
from attnlens.model.training.corpus import load_corpus
from attnlens.model.training.evaluate import evaluate_lm
from attnlens.model.training.repeats import repeated_text
from attnlens.model.training.reports import Report
from attnlens.record.errors import InputError, literal
from attnlens.record.next_tokens import NextTokens
from attnlens.record.trace import Kind, Trace


class CausalLens(OwnLens[DecoderOnlyTransformer]):
    """A bundled decoder-only language model: causal self-attention only."""

    architecture = "decoder"
    example = "The return statement"
    head_kinds: tuple[Kind, ...] = ("decoder_self",)

    def loaded(self) -> None:
        """Its example, and the check that it reads characters."""
        self.example = str(self.meta.get("example", self.example))
        self.prefix_ids = (self.tokenizer.bos_id,)
        if not isinstance(self.tokenizer, CharTokenizer):
            raise InputError(
                f"{self.folder.name}: a decoder-only model here reads characters, not "
                f"{self.tokenizer.unit}s"
            )

    def build(self, config: TransformerConfig) -> DecoderOnlyTransformer:
        return DecoderOnlyTransformer(config)

    def unknown_warning(self, what: str, unknown: list[str]) -> str:  # type: ignore[override]
        shown = "".join(dict.fromkeys(unknown))
        return f"characters outside the vocabulary were read as <unk>: {literal(shown)}"

    def prompt(
        self, text: str, target: str | None = None
    ) -> tuple[list[int], list[str], list[str]]:
        """Ids and tokens of <s> + text (+ target), and warnings about unknown characters."""
        if not check_text(text):
            raise InputError("text is empty; type at least one character")
        full = text + (check_text(target, "target") if target is not None else "")
        enc, warnings = self.encode(full, "text", self.max_tokens)
        return [self.tokenizer.bos_id, *enc.ids], [BOS, *enc.tokens], warnings

    def _weights(self, given_input: TraceInput) -> Trace:
        """TEXT (then target, as text or tokens) on the decoder side; tgt_logprobs of each
        next character."""
        text, target, pair = given_input.text, given_input.target, given_input.pair
        target_tokens = given_input.target_tokens
        given = check_target(target, target_tokens)
        refuse_pair(pair, self.name, "join the two texts in one")
        ids, tokens, warnings = self.prompt(text, target)
        if given is not None:
            given = given[:-1] if given and given[-1] == EOS else given
            ids = [*ids, *ids_of_tokens(given, self.tokenizer.index, self.name)]
            tokens = [*tokens, *given]
            if len(ids) > self.config.max_len:
                raise InputError(
                    f"text with target has {len(ids) - 1} characters but {self.name} takes at "
                    f"most {self.max_tokens}"
                )
        c, T = self.config, len(ids)
        check_budget(trace_bytes(c.N, c.h, 0, T), "trace")
        out, mask = self.forward(torch.tensor([ids], device=self.device))
        with torch.inference_mode():
            logprobs = self.net.log_probs(out.hidden)[0]  # (T, V)
        nxt = torch.tensor([*ids[1:], self.tokenizer.eos_id], device=self.device)  # (T,)
        return Trace(
            model=self.info, src_tokens=(), tgt_tokens=tuple(tokens),
            encoder_self=None, decoder_self=numpy_of(out.self_attention[:, 0]),  # (N, h, T, T)
            cross=None, encoder_self_mask=None, decoder_self_mask=mask[0].cpu().numpy(),
            cross_mask=None, positional_encoding=numpy_of(self.net.positional(0, T)),
            tgt_logprobs=numpy_of(logprobs.gather(-1, nxt.unsqueeze(-1)).squeeze(-1)),
            warnings=tuple(warnings), positional_scheme="sinusoidal",
        )  # fmt: skip

    def _attribution(self) -> Attribution:
        return causal_part(self)

    def _predictor(self) -> Predictor:
        return Predictor(self._next_tokens)

    def _next_tokens(self, text: str, k: int = 3) -> NextTokens:
        """Each position's k likeliest next characters: the softmax of the generator's logits
        over <s> + text, as `trace` reads it."""
        k = check_top(k)
        ids, tokens, _ = self.prompt(text)
        check_logits_budget(len(ids), self.config.tgt_vocab)
        out, _ = self.forward(torch.tensor([ids], device=self.device))
        with torch.inference_mode():
            logits = self.net.generator(out.hidden)[0]  # (T, V)
        names = [self.tokenizer.token(i) for i in range(self.config.tgt_vocab)]
        return top_next(logits, k, tokens, names)

    @torch.inference_mode()
    def forward(
        self, tokens: torch.Tensor, keep_qkv: bool = False
    ) -> tuple[CausalOutput, torch.Tensor]:
        """The causal stack over tokens (1, T), and the mask it applied, (1, T, T)."""
        mask = causal_mask(tokens.size(1), 0, tokens.device)  # (1, T, T)
        return self.net.decode(tokens, mask, keep_qkv=keep_qkv), mask

    def decode_plan(self, text: str) -> DecodePlan:
        """Continue TEXT: greedy, beam search or sampling, each step recorded."""
        ids, tokens, warnings = self.prompt(text)
        room = self.config.max_len - len(ids)
        if room < 1:
            raise InputError(
                f"text fills all {self.max_tokens} positions of {self.info.name}: "
                "no room to continue"
            )
        c, tok = self.config, self.tokenizer
        return DecodePlan(
            ModelLimits(room, tok.index, c.N, c.h, self.head_kinds, "decoder"),
            lambda settings: self.run(
                CausalStepper(self.net, carried=True), settings, None, ids, tokens, warnings
            ),
        )

    @property
    def capabilities(self) -> Capabilities:
        """lm is measured by perplexity; induction by its experiment instead (the reason)."""
        can = super().capabilities
        if can.evaluation is not None:
            return can
        why = (
            f"{self.name} is measured by its heads and copy losses: attnlens experiment "
            f"induction {self.name}"
        )
        return replace(can, why_not={**can.why_not, "evaluation": why})

    def _evaluation(self) -> Evaluation | None:
        return None if self.meta.get("task") == "induction" else Evaluation(self._evaluate)

    def _evaluate(self, n: int, seed: int, suite: str = "held-out") -> Report:
        return evaluate_lm(self.name, self.net, self.tokenizer, n, suite)

    def _samples(self) -> Samples:
        return Samples(self._sample_texts)

    def _sample_texts(self, n: int, seed: int) -> list[str]:
        """The induction model's repeated spans; otherwise held-out sentences of help text."""
        rng = random.Random(seed)
        if self.meta.get("task") == "induction":
            return [repeated_text(rng) for _ in range(n)]
        held_out = [t for t in load_corpus().held_out if len(t) < self.max_tokens]
        return rng.sample(held_out, min(n, len(held_out)))

    def _run_tokens(self, batch: TokenBatch, ablate: Sequence[HeadRef] = ()) -> TokenRun:
        """The causal stack over each sequence (start token first), ablated heads zeroed."""
        if batch.source is not None:
            raise InputError(f"{self.name} is decoder-only: it takes no source")
        ids, lengths = self.padded(batch.tokens, "tokens")  # (B, T)
        self.check_batch_budget(ids.size(0), 0, ids.size(1))
        head_mask = causal_head_mask(self.net, self.checked_heads(ablate))
        with torch.inference_mode():
            out = self.net.decode(ids, target_mask(ids, self.tokenizer.pad_id), None, head_mask)
            logprobs = self.net.log_probs(out.hidden)  # (B, T, V)
        given = logprobs[:, :-1].gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)  # (B, T-1)
        attention = numpy_of(out.self_attention.transpose(0, 1))  # (B, N, h, T, T)
        return TokenRun(
            None, past_length(attention, lengths, 3, np.nan), None,
            past_length(numpy_of(given), lengths - 1, 1, np.nan),
            past_length(logprobs.argmax(-1).cpu().numpy(), lengths, 1, -1),
        )  # fmt: skip

    def _run_ablations(
        self, batch: TokenBatch, ablations: Sequence[Sequence[HeadRef]]
    ) -> list[TokenRun]:
        """The batch once per set of ablated heads, the sets side by side in one forward pass
        (a head mask per row), attention left out."""
        if batch.source is not None:
            raise InputError(f"{self.name} is decoder-only: it takes no source")
        ids, lengths = self.padded(batch.tokens, "tokens")  # (B, T)
        B, runs = ids.size(0), []
        for group in self.ablation_groups(ablations, B):
            rows = ids.repeat(len(group), 1)  # (k·B, T): set i on rows i·B … (i + 1)·B - 1
            self.check_batch_budget(rows.size(0), 0, rows.size(1))
            head_mask = causal_rows_mask(self.net, group, B)  # (N, k·B, h)
            with torch.inference_mode():
                out = self.net.decode(rows, target_mask(rows, self.tokenizer.pad_id), None,
                                      head_mask)  # fmt: skip
                logprobs = self.net.log_probs(out.hidden)  # (k·B, T, V)
            given = logprobs[:, :-1].gather(-1, rows[:, 1:].unsqueeze(-1)).squeeze(-1)
            top = logprobs.argmax(-1).cpu().numpy()  # (k·B, T)
            given_np = numpy_of(given)  # (k·B, T - 1)
            for i in range(len(group)):
                mine = slice(i * B, (i + 1) * B)
                runs.append(TokenRun(
                    None, None, None, past_length(given_np[mine], lengths - 1, 1, np.nan),
                    past_length(top[mine], lengths, 1, -1),
                ))  # fmt: skip
        return runs

    def attention_inputs(self, trace: Trace, kind: Kind, layer: int) -> tuple[QKV, np.ndarray]:
        if kind != "decoder_self":
            raise InputError(f"{self.name} is decoder-only: it has decoder self-attention only")
        out, mask = self.forward(self.ids_of(trace.tgt_tokens), keep_qkv=True)
        assert out.qkv is not None, "keep_qkv=True returns every layer's Q, K, V"
        return out.qkv[layer], mask[0].cpu().numpy().astype(bool)
