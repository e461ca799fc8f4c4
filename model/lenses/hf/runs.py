"""What a Hugging Face model does for the head experiments and the next-token table: token-id
runs (batch.py), heads ablated in a private copy of the model (ablation.py), held-out English
to sample, and a decoder-only model's likeliest next tokens."""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from attnlens.model.budget import check_budget, trace_bytes
from attnlens.model.decoding.heads import HeadRef
from attnlens.model.lenses.hf import batch as batches
from attnlens.model.lenses.hf.ablation import OutputProjections
from attnlens.model.lenses.hf.encoding import encode_prompt, encode_source, start_id
from attnlens.model.lenses.hf.next_tokens import prompt_next_tokens
from attnlens.model.lenses.lens import check_text
from attnlens.model.lenses.token_runs import TokenBatch, TokenRun, TokenSpace, without_attention
from attnlens.model.training.corpus import load_corpus
from attnlens.record.next_tokens import NextTokens
from attnlens.record.trace import Architecture, ModelInfo


class HFRuns:
    """HFLens' token-id runs, ablations, samples and next tokens (its capabilities' parts)."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    architecture: Architecture
    info: ModelInfo
    device: torch.device
    names: tuple[str, ...]
    projections: OutputProjections
    _max_tokens: int  # the longest input, HFLens.max_tokens

    def _token_space(self) -> TokenSpace:
        start = None
        if self.architecture == "encoder-decoder":
            start = start_id(self.model, self.tokenizer)
        return batches.token_space(self.tokenizer, self.architecture, self.names, start)

    def _token_ids(self, text: str) -> tuple[int, ...]:
        name, limit = self.info.name, self._max_tokens
        if self.architecture == "decoder":
            return encode_prompt(self.tokenizer, text, None, limit, name).ids
        return encode_source(self.tokenizer, text, limit, name).ids

    def _run_tokens(self, batch: TokenBatch, ablate: Sequence[HeadRef] = ()) -> TokenRun:
        """One forward pass over the batch; ablated heads zeroed in a private copy of the model
        made for this call (the shared model is never changed)."""
        self._check_batch(batch)
        model = self.projections.without(self.model, ablate)
        return batches.run_tokens(
            model, self.architecture, batch, len(self.names), self._max_tokens, self.device
        )

    def _run_ablations(
        self, batch: TokenBatch, ablations: Sequence[Sequence[HeadRef]]
    ) -> list[TokenRun]:
        """A forward pass per set of ablated heads, all in one private copy of the model made
        for this call (its output projections set for each set in turn), attention left out."""
        self._check_batch(batch)
        vocab, limit, device, arch = (
            len(self.names),
            self._max_tokens,
            self.device,
            self.architecture,
        )
        model_type = str(self.model.config.model_type)
        resumable = arch == "encoder" and self.projections.resumable(model_type)
        runs, inputs = [], {}  # inputs: layer l → its input, unablated (for this call only)
        variants = self.projections.variants(self.model, ablations)
        for ablate, model in zip(ablations, variants, strict=True):
            first = min((r.layer for r in ablate), default=0)
            if not resumable or model is self.model or first == 0:
                runs.append(batches.run_tokens(model, arch, batch, vocab, limit, device))
                continue
            if first not in inputs:  # the layers before the first ablated one, as they are
                with self.projections.layers(model, model_type, slice(0, first), None):
                    inputs[first] = batches.last_hidden(model, batch, vocab, limit, device)
            with self.projections.layers(model, model_type, slice(first, None), inputs[first]):
                runs.append(batches.run_tokens(model, arch, batch, vocab, limit, device))
        return [without_attention(run) for run in runs]

    def _check_batch(self, batch: TokenBatch) -> None:
        rows = max(len(r) for r in [*batch.tokens, *(batch.source or [])]) if batch.tokens else 0
        check_budget(len(batch.tokens) * trace_bytes(
            self.info.n_layers, self.info.n_heads, rows, rows), "experiment batch",
            "use fewer or shorter sequences")  # fmt: skip

    def _sample_texts(self, n: int, seed: int) -> list[str]:
        """English sentences: held-out help text that ships with Python (nothing to fetch)."""
        held_out = list(load_corpus().held_out)
        random.Random(seed).shuffle(held_out)
        fitting = []
        for text in held_out:  # as many as fit within the model's positions
            if len(self.tokenizer(text, add_special_tokens=True)["input_ids"]) < self._max_tokens:
                fitting.append(text)
                if len(fitting) == n:
                    break
        return fitting

    def _next_tokens(self, text: str, k: int = 3) -> NextTokens:
        """A decoder-only model's k likeliest next tokens at each position of its prompt."""
        return prompt_next_tokens(self.model, self.tokenizer, check_text(text), k,
                                  self._max_tokens, self.info.name, self.names)  # fmt: skip
