"""Which kind of Transformer a Hugging Face config describes, and its sizes."""

from __future__ import annotations

from transformers import PretrainedConfig
from transformers.models.auto.modeling_auto import (
    MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
    MODEL_FOR_MASKED_LM_MAPPING_NAMES,
)

from attnlens.record.trace import Architecture, ModelInfo

CAUSAL_ARCHITECTURE_SUFFIXES = ("ForCausalLM", "LMHeadModel")
DEFAULT_LIMIT = 512  # when neither the config nor the tokenizer states a length


def detect_kind(config: PretrainedConfig) -> Architecture:
    """Encoder-decoder, decoder-only or encoder-only, from the config's own flags and names."""
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder"
    if getattr(config, "is_decoder", False):
        return "decoder"
    architectures = getattr(config, "architectures", None) or []
    if any(a.endswith(CAUSAL_ARCHITECTURE_SUFFIXES) for a in architectures):
        return "decoder"
    model_type = getattr(config, "model_type", "")
    causal_only = (
        model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES
    )
    return "decoder" if causal_only else "encoder"


def model_info(name: str, kind: Architecture, config: PretrainedConfig) -> ModelInfo:
    """Layers, heads and width as the config states them (the encoder's, for encoder-decoders)."""
    text = config.get_text_config()
    return ModelInfo(
        name=name,
        architecture=kind,
        n_layers=int(text.num_hidden_layers),
        n_heads=int(text.num_attention_heads),
        d_model=int(text.hidden_size),
    )


def config_limit(config: PretrainedConfig, tokenizer_limit: int | None) -> int:
    """The longest sequence the config or tokenizer admits (positions), else DEFAULT_LIMIT."""
    text = config.get_text_config()
    for key in ("max_position_embeddings", "n_positions"):
        value = getattr(text, key, None)
        if isinstance(value, int) and value > 0:
            return value
    if tokenizer_limit is not None and 0 < tokenizer_limit < 1_000_000:
        return tokenizer_limit
    return DEFAULT_LIMIT


def sliding_window(config: PretrainedConfig) -> tuple[int | None, bool]:
    """(window, on every layer): a query at i sees keys j with i - j < window; (None, True) when
    the model attends to the whole causal prefix."""
    text = config.get_text_config()
    window = getattr(text, "sliding_window", None)
    if not isinstance(window, int) or window <= 0:
        return None, True
    if getattr(text, "use_sliding_window", True) is False:
        return None, True
    types = getattr(text, "layer_types", None)
    if types is not None and "sliding_attention" not in types:
        return None, True
    return window, types is None or all(t == "sliding_attention" for t in types)
