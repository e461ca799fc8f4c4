"""Text to token ids with the model's own tokenizer, checked against the model's limits."""

from __future__ import annotations

import json
from dataclasses import dataclass

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from attnlens.record.errors import InputError


@dataclass(frozen=True)
class Encoded:
    """Token ids, the tokenizer's own strings for them, and warnings about the text."""

    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def _encoded(tokenizer: PreTrainedTokenizerBase, ids: list[int], what: str) -> Encoded:
    unk = tokenizer.unk_token_id
    warnings: tuple[str, ...] = ()
    if unk is not None and unk in ids:
        warnings = (f"{what} outside the vocabulary was read as {tokenizer.unk_token}",)
    tokens = tokenizer.convert_ids_to_tokens(ids)
    return Encoded(tuple(ids), tuple(str(t) for t in tokens), warnings)


def _check_length(count: int, limit: int, what: str, name: str) -> None:
    if count > limit:
        raise InputError(f"{what} has {count} tokens but {name} takes at most {limit}")


def encode_source(tokenizer: PreTrainedTokenizerBase, text: str, limit: int, name: str) -> Encoded:
    """The encoder input, special tokens included as the tokenizer adds them."""
    if not text.strip():
        raise InputError("text is empty; type at least one word")
    ids = list(tokenizer(text, add_special_tokens=True)["input_ids"])
    _check_length(len(ids), limit, "text", name)
    return _encoded(tokenizer, ids, "text")


def encode_target(
    tokenizer: PreTrainedTokenizerBase, target: str, limit: int, name: str, eos: int | None
) -> Encoded:
    """Target ids as the tokenizer makes labels, without the end token (appended by the caller)."""
    ids = list(tokenizer(text_target=target, add_special_tokens=True)["input_ids"])
    if ids and eos is not None and ids[-1] == eos:
        ids = ids[:-1]
    _check_length(len(ids) + 1, limit, "target", name)
    return _encoded(tokenizer, ids, "target")


def encode_prompt(
    tokenizer: PreTrainedTokenizerBase, text: str, target: str | None, limit: int, name: str
) -> Encoded:
    """Decoder-only input: the start token when the model has one, TEXT, then TARGET if given."""
    if not text.strip():
        raise InputError("text is empty; type at least one word")
    ids = list(tokenizer(text, add_special_tokens=True)["input_ids"])
    bos = tokenizer.bos_token_id
    if bos is not None and (not ids or ids[0] != bos):
        ids = [bos, *ids]
    if target is not None:
        ids += list(tokenizer(target, add_special_tokens=False)["input_ids"])
    _check_length(len(ids), limit, "text" if target is None else "text with target", name)
    return _encoded(tokenizer, ids, "text")


def end_ids(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> tuple[int, ...]:
    """Every end-of-sequence id the model generates, first the main one (a config may name
    several, as Llama 3 and Qwen instruct models do; `generate` stops on any)."""
    generation = getattr(model, "generation_config", None)
    eos = None if generation is None else generation.eos_token_id
    if eos is None:
        eos = getattr(model.config, "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    if eos is None:
        return ()
    listed = eos if isinstance(eos, list | tuple) else [eos]
    return tuple(dict.fromkeys(int(i) for i in listed))


def check_ids(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, vocab_size: int, name: str
) -> None:
    """Refuse a config whose special token ids fall outside the vocabulary, naming the id."""
    generation = getattr(model, "generation_config", None)
    sources = [model.config.get_text_config(), model.config, generation]
    for key in ("eos_token_id", "decoder_start_token_id", "forced_bos_token_id",
                "forced_eos_token_id", "bos_token_id", "pad_token_id"):  # fmt: skip
        for source in sources:
            value = getattr(source, key, None) if source is not None else None
            for i in value if isinstance(value, list | tuple) else [value]:
                if isinstance(i, int) and not 0 <= i < vocab_size:
                    raise InputError(
                        f"{name}: its config's {key} is {i}, outside the vocabulary of "
                        f"{vocab_size} tokens (ids 0-{vocab_size - 1})"
                    )


def start_id(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> int:
    """The id an encoder-decoder's decoder starts from."""
    generation = getattr(model, "generation_config", None)
    for value in (
        None if generation is None else generation.decoder_start_token_id,
        getattr(model.config, "decoder_start_token_id", None),
        tokenizer.bos_token_id,
        tokenizer.pad_token_id,
    ):
        if isinstance(value, int):
            return value
    raise InputError(f"{model.config.model_type}: the config names no decoder start token")


def is_byte_level(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether the tokenizer is byte-level BPE (its strings then stand for bytes: Ġ = space)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return False
    spec = json.loads(backend.to_str())
    return any(_names_byte_level(spec.get(part)) for part in ("pre_tokenizer", "decoder"))


def _names_byte_level(node: object) -> bool:
    if isinstance(node, dict):
        return node.get("type") == "ByteLevel" or any(_names_byte_level(v) for v in node.values())
    if isinstance(node, list):
        return any(_names_byte_level(v) for v in node)
    return False
