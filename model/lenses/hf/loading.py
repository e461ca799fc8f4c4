"""Finding and loading a Hugging Face model safely: local folder or hub id, safetensors only
unless the caller opts in, never code from the model's folder."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import huggingface_hub
import torch
from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    PretrainedConfig,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from attnlens.model.lenses.hf.architecture import detect_architecture
from attnlens.model.lenses.hf.names import is_hf_folder, looks_like_hub_id
from attnlens.model.lenses.hf.sizes import check_sizes, quiet_loading
from attnlens.record.errors import InputError, ModelNotFoundError
from attnlens.record.trace import Architecture

PICKLE_GLOBS = ("*.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl")
SAFE_GLOBS = ("*.safetensors",)
SUPPORT_FILES = ("*.json", "*.txt", "*.model", "*.tiktoken")  # configs and tokenizers; never code
HUB_TIMEOUT_S = 5.0
OFFLINE_VALUES = {"1", "ON", "YES", "TRUE"}


@dataclass(frozen=True)
class Loaded:
    """A model ready to trace: weights in eval mode, its tokenizer and its architecture."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    config: PretrainedConfig
    architecture: Architecture
    folder: Path


def hub_offline() -> bool:
    """HF_HUB_OFFLINE=1 (read now, not at import) or huggingface_hub's own offline switch."""
    flag = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in OFFLINE_VALUES
    return flag or bool(huggingface_hub.constants.HF_HUB_OFFLINE)


def resolve(name_or_path: str, allow_pickle: bool = False, cache_dir: Path | None = None) -> Path:
    """The local folder holding the model: the folder given, or the hub id's snapshot."""
    folder = Path(name_or_path).expanduser()
    if folder.is_dir():
        if not is_hf_folder(folder):
            raise ModelNotFoundError(
                f"{folder} is not a Hugging Face model folder: no config.json naming a model_type"
            )
        return folder
    if not looks_like_hub_id(name_or_path):
        raise ModelNotFoundError(f"no model {name_or_path!r}: not a folder nor a hub id")
    with quiet_loading():  # the hub's download bars only once the download succeeded
        return _from_hub(name_or_path, allow_pickle, cache_dir)


def _hub_patterns(allow_pickle: bool) -> list[str]:
    weights = [*SAFE_GLOBS, *(PICKLE_GLOBS if allow_pickle else ())]
    return [*SUPPORT_FILES, *weights]


def _from_hub(repo_id: str, allow_pickle: bool, cache_dir: Path | None) -> Path:
    """The cached snapshot; fetched only when the hub is allowed and reachable."""
    patterns = _hub_patterns(allow_pickle)
    try:
        return Path(
            huggingface_hub.snapshot_download(  # type: ignore[arg-type]
                repo_id, allow_patterns=patterns, cache_dir=cache_dir, local_files_only=True
            )
        )
    except (LocalEntryNotFoundError, HFValidationError):
        if hub_offline():
            raise ModelNotFoundError(
                f"no model {repo_id!r}: not a bundled name, not a folder, and not in the local "
                "Hugging Face cache (HF_HUB_OFFLINE is set, so the hub was not asked)"
            ) from None
    try:
        return Path(
            huggingface_hub.snapshot_download(  # type: ignore[arg-type]
                repo_id, allow_patterns=patterns, cache_dir=cache_dir, etag_timeout=HUB_TIMEOUT_S
            )
        )
    except Exception as error:  # the hub's errors are many; every one means "not loadable"
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ModelNotFoundError(
            f"no model {repo_id!r}: not a bundled name, not a folder, not in the local Hugging "
            f"Face cache, and the hub could not provide it ({reason})"
        ) from None


def check_weights(folder: Path, allow_pickle: bool) -> None:
    """Refuse pickle-only weights (loading a pickle can run code) unless the caller opts in."""
    if any(next(folder.glob(g), None) for g in SAFE_GLOBS):
        return
    pickles = sorted(p.name for g in PICKLE_GLOBS for p in folder.glob(g))
    if pickles and not allow_pickle:
        raise InputError(
            f"{folder} holds only pickle weights ({', '.join(pickles)}), which can run code when "
            "loaded; convert them to safetensors, or pass allow_pickle=True to load them anyway"
        )
    if not pickles:
        raise InputError(f"{folder} holds no model weights (looked for *.safetensors)")


def load_config(folder: Path) -> PretrainedConfig:
    """The model's configuration; a model needing its own code is refused, and so is any
    config transformers cannot read (whatever it raises: a crafted config raises anything)."""
    try:
        config: PretrainedConfig = AutoConfig.from_pretrained(
            folder, trust_remote_code=False, local_files_only=True
        )
    except (ValueError, OSError, KeyError) as error:
        raise InputError(
            f"{folder.name}: transformers cannot read this model's config without running code "
            f"from the folder, which attnlens never does, or at all ({_first_line(error)})"
        ) from None
    except Exception as error:
        raise InputError(
            f"{folder.name}: config.json cannot be read ({_first_line(error)})"
        ) from None
    return config


def _model_class(architecture: Architecture) -> Any:
    return {
        "encoder-decoder": AutoModelForSeq2SeqLM,
        "decoder": AutoModelForCausalLM,
        "encoder": AutoModel,
    }[architecture]


def load_folder(folder: Path, device: torch.device, allow_pickle: bool = False) -> Loaded:
    """Weights (eager attention, float32, eval mode), tokenizer and architecture from a local
    folder; the config's sizes and the weights' size are checked against the model budget
    first."""
    check_weights(folder, allow_pickle)
    config = load_config(folder)
    check_sizes(config, folder)
    architecture = detect_architecture(config)
    with quiet_loading():
        try:
            model = _model_class(architecture).from_pretrained(
                folder,
                config=config,
                attn_implementation="eager",  # the only implementation that returns its weights
                use_safetensors=None if allow_pickle else True,
                trust_remote_code=False,
                local_files_only=True,
                dtype=torch.float32,
            )
            tokenizer = AutoTokenizer.from_pretrained(
                folder, trust_remote_code=False, local_files_only=True
            )
        except Exception as error:
            raise InputError(
                f"{folder.name}: cannot load the model ({_first_line(error)})"
            ) from None
    if not isinstance(tokenizer, PreTrainedTokenizerBase):
        raise InputError(f"{folder.name}: no text tokenizer found")
    specials = len(set(tokenizer.all_special_ids))
    if len(tokenizer) <= specials:
        raise InputError(
            f"{folder.name}: no tokenizer files (tokenizer.json, vocab.txt, …): the tokenizer "
            f"transformers falls back to knows only its {specials} special tokens"
        )
    vocab_size = int(config.get_text_config().vocab_size)
    if len(tokenizer) > vocab_size:
        raise InputError(
            f"{folder.name}: the tokenizer has {len(tokenizer)} tokens but the model's "
            f"vocabulary has {vocab_size}: ids from {vocab_size} up would not run"
        )
    return Loaded(model.to(device).eval(), tokenizer, config, architecture, folder)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return " ".join(text.splitlines()[0].split()) if text else type(error).__name__
