"""A Lens over a Hugging Face model someone already holds (`attnlens.wrap(model, tokenizer)`):
the same records, decoding and figures as a model attnlens loads, without reloading or copying
its weights.

The model stays the caller's and is shared, not copied: each call switches it to eager attention
and eval mode and puts back what it had (`eager.py`); calls through any lens over the same model
run one at a time. The lens is therefore safe to share between threads, but the model must not
be run from elsewhere (trained in another thread, say) while a lens call is under way. Nothing
is hooked into the model: the records come back by return value.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from attnlens.model.decoding.heads import HeadRef
from attnlens.model.decoding.request import DecodeSettings
from attnlens.model.lenses.hf.architecture import CAUSAL_ARCHITECTURE_SUFFIXES, detect_architecture
from attnlens.model.lenses.hf.eager import switch_of
from attnlens.model.lenses.hf.lens import HFLens
from attnlens.model.lenses.hf.loading import Loaded
from attnlens.model.lenses.lens import DecodePlan, RecordMode, TraceInput
from attnlens.model.lenses.token_runs import TokenBatch, TokenRun
from attnlens.record.decode import DecodeRun
from attnlens.record.errors import InputError
from attnlens.record.trace import Architecture, Trace


def checked_model(model: object) -> PreTrainedModel:
    """The model, or an InputError saying what was passed instead and what to pass."""
    if isinstance(model, PreTrainedModel):
        return model
    cls = type(model).__name__
    if hasattr(model, "model") and hasattr(model, "tokenizer"):
        raise InputError(f"got a {cls}; wrap its parts: attnlens.wrap(pipe.model, pipe.tokenizer)")
    raise InputError(
        f"attnlens.wrap takes a PyTorch Hugging Face model (a transformers PreTrainedModel), "
        f"not a {cls}"
    )


def checked_tokenizer(tokenizer: object) -> PreTrainedTokenizerBase:
    """The tokenizer, or an InputError (a processor holds its tokenizer as .tokenizer)."""
    if isinstance(tokenizer, PreTrainedTokenizerBase):
        return tokenizer
    inner = getattr(tokenizer, "tokenizer", None)
    if isinstance(inner, PreTrainedTokenizerBase):
        return inner
    raise InputError(
        f"attnlens.wrap needs the model's text tokenizer (a transformers tokenizer), not a "
        f"{type(tokenizer).__name__}"
    )


def wrapped_architecture(model: PreTrainedModel) -> Architecture:
    """Encoder-decoder, decoder-only or encoder-only; the class says it first (a model built in
    a notebook has no `architectures` in its config)."""
    if type(model).__name__.endswith(CAUSAL_ARCHITECTURE_SUFFIXES):
        return "decoder"
    return detect_architecture(model.config)


def check_wrappable(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> Architecture:
    """Refuse, by name, what the lens could not run: no text input, no language-model head where
    decoding needs one, a tokenizer larger than the model's vocabulary, weights on no device."""
    name, architecture = type(model).__name__, wrapped_architecture(model)
    if getattr(model, "main_input_name", "input_ids") != "input_ids":
        raise InputError(f"{name} reads {model.main_input_name}, not text: attnlens reads text")
    if architecture != "encoder" and model.get_output_embeddings() is None:
        raise InputError(
            f"{name} has no language-model head, so attnlens cannot decode with it nor give "
            "next-token log-probabilities; wrap the model with its head (AutoModelForCausalLM or "
            "AutoModelForSeq2SeqLM), or draw the attention it returned with attnlens.from_hf"
        )
    vocab = int(model.config.get_text_config().vocab_size)
    if len(tokenizer) > vocab:
        raise InputError(
            f"the tokenizer has {len(tokenizer)} tokens but {name}'s vocabulary holds {vocab}: "
            "pass the model's own tokenizer (or resize the model's embeddings to it)"
        )
    if model.device.type == "meta":
        raise InputError(f"{name}'s weights are not loaded (they are on the meta device)")
    return architecture


class WrappedLens(HFLens):
    """An HFLens over a model in memory; every call holds the model's switch to eager attention."""

    def __init__(self, model: object, tokenizer: object, name: str | None = None) -> None:
        hf_model, hf_tokenizer = checked_model(model), checked_tokenizer(tokenizer)
        architecture = check_wrappable(hf_model, hf_tokenizer)
        self._switch = switch_of(hf_model)
        with self._switch.held(hf_model):  # refuses now, not at the first call
            pass
        origin = hf_model.config.name_or_path or type(hf_model).__name__
        loaded = Loaded(hf_model, hf_tokenizer, hf_model.config, architecture, Path(origin))
        self._adopt(loaded, hf_model.device, name or origin, "", f"in memory: {origin}")

    def _checked_device(self) -> None:
        now = self.model.device
        if now != self.device:
            raise InputError(
                f"{self.info.name} moved from {self.device} to {now} after it was wrapped; "
                "wrap it again"
            )

    def _trace(self, given: TraceInput, record: RecordMode) -> Trace:
        with self._switch.held(self.model):
            self._checked_device()
            return super()._trace(given, record)

    def decode_plan(self, text: str) -> DecodePlan:
        plan = super().decode_plan(text)

        def run(settings: DecodeSettings) -> DecodeRun:
            with self._switch.held(self.model):
                self._checked_device()
                return plan.run(settings)

        return DecodePlan(plan.limits, run)

    def _run_tokens(self, batch: TokenBatch, ablate: Sequence[HeadRef] = ()) -> TokenRun:
        with self._switch.held(self.model):
            self._checked_device()
            return super()._run_tokens(batch, ablate)

    def _run_ablations(
        self, batch: TokenBatch, ablations: Sequence[Sequence[HeadRef]]
    ) -> list[TokenRun]:
        with self._switch.held(self.model):
            self._checked_device()
            return super()._run_ablations(batch, ablations)


def wrap(model: object, tokenizer: object, name: str | None = None) -> WrappedLens:
    """A Lens over a Hugging Face model already loaded (encoder, decoder or encoder-decoder),
    sharing its weights; the model comes back unchanged after every call."""
    return WrappedLens(model, tokenizer, name)
