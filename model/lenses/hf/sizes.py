"""Checks made before a Hugging Face model is built: its config's sizes are whole positive
numbers, and the model it describes (and the weights on disk) fit the model budget; and
loading that keeps stderr for a success (progress bars and warnings, unless on a terminal)."""

from __future__ import annotations

import contextlib
import logging
import numbers
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import transformers.utils.logging as hf_logging
from huggingface_hub.utils import (  # type: ignore[attr-defined]  # exported, not re-declared
    disable_progress_bars,
    enable_progress_bars,
)
from safetensors import SafetensorError, safe_open
from transformers import PretrainedConfig

from attnlens.model.budget import BYTES_PER_WEIGHT, check_layers, check_model_size
from attnlens.record.errors import InputError

REQUIRED = ("num_hidden_layers", "num_attention_heads", "hidden_size", "vocab_size")
OPTIONAL = ("intermediate_size", "max_position_embeddings", "decoder_layers",
            "num_decoder_layers", "n_inner", "d_ff", "num_key_value_heads", "head_dim")  # fmt: skip
FEED_FORWARD = ("intermediate_size", "n_inner", "d_ff", "encoder_ffn_dim", "ffn_dim")
POSITIONS = ("max_position_embeddings", "n_positions")
DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
               "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}  # fmt: skip


def check_sizes(config: PretrainedConfig, folder: Path) -> None:
    """Refuse a config whose sizes are not whole positive numbers, or whose model (by its
    config, or by its weights loaded as float32) is larger than ATTNLENS_MAX_MODEL_MB."""
    text = config.get_text_config()
    name = folder.name
    for key in REQUIRED:
        _whole(name, key, getattr(text, key, None), required=True)
    for key in OPTIONAL:
        _whole(name, key, getattr(text, key, None), required=False)
    layers = int(text.num_hidden_layers) + int(_decoder_layers(config) or 0)
    check_layers(layers, f"model {name!r}")
    on_disk = weights_bytes(folder)
    if on_disk == 0 and any(folder.glob("*.safetensors")):
        raise InputError(f"{name}: its safetensors weights hold no tensors")
    check_model_size(max(config_bytes(config), on_disk), f"model {name!r}")


def _whole(name: str, key: str, value: object, required: bool) -> None:
    if value is None and not required:
        return
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or int(value) < 1:
        raise InputError(
            f"{name}: config.json's {key} must be a whole number above 0, got {value!r}"
        )


def config_bytes(config: PretrainedConfig) -> int:
    """About what the model's parameters and tables take as float32, from its config alone:
    embeddings, position table and, per layer, attention (4 d²) and feed-forward (2 d f)."""
    text = config.get_text_config()
    d, layers, vocab = int(text.hidden_size), int(text.num_hidden_layers), int(text.vocab_size)
    ff = next((int(v) for k in FEED_FORWARD if isinstance(v := getattr(text, k, None), int)),
              4 * d)  # fmt: skip
    positions = next((int(v) for k in POSITIONS if isinstance(v := getattr(text, k, None), int)),
                     0)  # fmt: skip
    decoder = _decoder_layers(config)
    layers += layers if decoder is None and config.is_encoder_decoder else int(decoder or 0)
    params = vocab * d + positions * d + layers * (4 * d * d + 2 * d * ff)
    return params * BYTES_PER_WEIGHT


def _decoder_layers(config: PretrainedConfig) -> int | None:
    """An encoder-decoder's decoder depth when its config states one apart."""
    if not getattr(config, "is_encoder_decoder", False):
        return None
    text = config.get_text_config()
    for key in ("decoder_layers", "num_decoder_layers"):
        value = getattr(text, key, None)
        if isinstance(value, int):
            return value
    return None


def weights_bytes(folder: Path) -> int:
    """What the folder's safetensors weights take once loaded as float32 (headers only)."""
    total = 0
    for path in sorted(folder.glob("*.safetensors")):
        try:
            with safe_open(str(path), framework="pt") as f:
                for key in f.keys():  # noqa: SIM118 (safe_open is not a mapping)
                    piece = f.get_slice(key)
                    count = 1
                    for n in piece.get_shape():
                        count *= int(n)
                    total += count * max(BYTES_PER_WEIGHT, DTYPE_BYTES.get(piece.get_dtype(), 4))
        except (SafetensorError, OSError, ValueError, RuntimeError) as error:
            text = str(error).strip().splitlines()
            raise InputError(
                f"{folder.name}/{path.name} is not a readable safetensors file "
                f"({text[0] if text else type(error).__name__})"
            ) from None
    return total


_quiet = threading.Lock()
_depth = 0


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """Loading without progress bars or warnings on stderr, unless stderr is a terminal; the
    warnings are written after a load that succeeds, so a failure stays one line."""
    global _depth
    if sys.stderr.isatty():
        yield
        return
    caught = _Collect()
    logger = logging.getLogger("transformers")
    with _quiet:
        _depth += 1
        if _depth == 1:
            hf_logging.disable_progress_bar()
            disable_progress_bars()
            hf_logging.disable_default_handler()
        logger.addHandler(caught)
    try:
        yield
    finally:
        with _quiet:
            logger.removeHandler(caught)
            _depth -= 1
            if _depth == 0:
                hf_logging.enable_default_handler()
                hf_logging.enable_progress_bar()
                enable_progress_bars()
    for line in caught.lines:  # reached only when loading succeeded
        print(line, file=sys.stderr)


class _Collect(logging.Handler):
    """Keeps transformers' warnings of one load, to show only if it succeeds."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
