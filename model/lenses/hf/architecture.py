"""Which architecture a Hugging Face config describes (encoder-decoder, decoder-only or
encoder-only), and its sizes."""

from __future__ import annotations

from transformers import PretrainedConfig
from transformers.models.auto.modeling_auto import (
    MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
    MODEL_FOR_MASKED_LM_MAPPING_NAMES,
)

from attnlens.record.trace import Architecture, ModelInfo

CAUSAL_ARCHITECTURE_SUFFIXES = ("ForCausalLM", "LMHeadModel")
DEFAULT_LIMIT = 512  # when neither the config nor the tokenizer states a length


def detect_architecture(config: PretrainedConfig) -> Architecture:
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


DECODER_LAYER_KEYS = ("decoder_layers", "num_decoder_layers")
DECODER_HEAD_KEYS = ("decoder_attention_heads", "num_decoder_attention_heads")


def model_info(name: str, architecture: Architecture, config: PretrainedConfig) -> ModelInfo:
    """Layers and heads as the config states them: the encoder's (or the only stack's), and
    the decoder's when an encoder-decoder's decoder differs (distilbart: 12 × 16 vs 3 × 16;
    a T5 with num_decoder_layers); a decoder-only model's key/value heads where its layers
    share them among the query heads (grouped-query attention)."""
    text = config.get_text_config()
    n_layers, n_heads = int(text.num_hidden_layers), int(text.num_attention_heads)
    decoder_layers = decoder_heads = None
    if architecture == "encoder-decoder":
        layers = _first_int(text, DECODER_LAYER_KEYS, n_layers)
        heads = _first_int(text, DECODER_HEAD_KEYS, n_heads)
        decoder_layers = layers if layers != n_layers else None
        decoder_heads = heads if heads != n_heads else None
    kv = getattr(text, "num_key_value_heads", None)
    divides = isinstance(kv, int) and 0 < kv < n_heads and n_heads % kv == 0
    shared = architecture == "decoder" and divides
    return ModelInfo(
        name=name, architecture=architecture, n_layers=n_layers, n_heads=n_heads,
        d_model=int(text.hidden_size), decoder_layers=decoder_layers, decoder_heads=decoder_heads,
        kv_heads=kv if shared else None,
    )  # fmt: skip


def _first_int(config: PretrainedConfig, keys: tuple[str, ...], default: int) -> int:
    for key in keys:
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return default


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
