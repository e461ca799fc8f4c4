"""Text to token ids with the model's own tokenizer, checked against the model's limits."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from transformers import BatchEncoding, PreTrainedModel, PreTrainedTokenizerBase

from attnlens.model.lenses.hf.architecture import detect_architecture
from attnlens.record.errors import InputError, quoted


@dataclass(frozen=True)
class Encoded:
    """Token ids, the tokenizer's own strings for them, and warnings about the text; for a
    sentence pair, each position's text (0 or 1) and the token type ids the model reads."""

    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    segments: tuple[int, ...] | None = None
    token_types: tuple[int, ...] | None = None


def _tokenize(
    tokenizer: PreTrainedTokenizerBase,
    text: str,
    pair: str | None = None,
    *,
    target: bool = False,
    specials: bool = True,
    what: str = "text",
) -> tuple[list[int], list[str], BatchEncoding]:
    """Ids with the tokenizer's own special tokens, and warnings about what the user typed:
    pieces read as the unknown token, and typed text that became a special token (the
    tokenizer reads "[SEP]" or "<pad>" typed in a text as that special token; attnlens keeps
    the model's reading but says so)."""
    fast = bool(getattr(tokenizer, "is_fast", False))
    kwargs: dict[str, Any] = dict(
        add_special_tokens=specials, return_special_tokens_mask=True, return_offsets_mapping=fast
    )
    if pair is not None:
        kwargs["return_token_type_ids"] = True  # the template's segment of each token
    enc = tokenizer(text_target=text, **kwargs) if target else tokenizer(text, pair, **kwargs)
    ids = [int(i) for i in enc["input_ids"]]
    added = list(enc.get("special_tokens_mask") or [0] * len(ids))
    offsets = list(enc.get("offset_mapping") or [None] * len(ids))
    sequence = enc.sequence_ids(0) if fast else [0] * len(ids)
    typed, unknown = _typed(tokenizer, ids, added, offsets, sequence, (text, pair or ""))
    warnings = []
    if typed:
        names = quoted(typed)
        hint = " (for a sentence pair, give the second text as the pair)"
        warnings.append(
            f"{what}: {names} typed in the text became the model's special token, as its "
            "tokenizer reads it" + (hint if tokenizer.sep_token in typed else "")
        )
    if unknown:
        shown = quoted(u for u in unknown if u) or "(some characters)"
        warnings.append(f"{what} outside the vocabulary was read as {tokenizer.unk_token}: {shown}")
    return ids, warnings, enc


def _typed(
    tokenizer: PreTrainedTokenizerBase,
    ids: list[int],
    added: list[int],
    offsets: list[Any],
    sequence: list[int | None],
    texts: tuple[str, str],
) -> tuple[list[str], list[str]]:
    """(typed special tokens, pieces read as unknown) among the positions the text produced
    (not those the tokenizer's template added)."""
    unk, special_ids = tokenizer.unk_token_id, set(tokenizer.all_special_ids)
    specials, unknown = [], []
    for k, i in enumerate(ids):
        if added[k] or (i not in special_ids and i != unk):
            continue
        span = offsets[k]
        typed = texts[sequence[k] or 0][span[0] : span[1]] if span is not None else ""
        name = str(tokenizer.convert_ids_to_tokens(i))
        if i == unk and typed.strip() != name:
            unknown.append(typed.strip())
        else:
            specials.append(name)
    return specials, unknown


def _check_length(count: int, limit: int, what: str, name: str) -> None:
    if count > limit:
        raise InputError(f"{what} has {count} tokens but {name} takes at most {limit}")


def _tokens(tokenizer: PreTrainedTokenizerBase, ids: list[int]) -> tuple[str, ...]:
    return tuple(str(t) for t in tokenizer.convert_ids_to_tokens(ids))


def encode_source(
    tokenizer: PreTrainedTokenizerBase, text: str, limit: int, name: str, pair: str | None = None
) -> Encoded:
    """The encoder input, special tokens included as the tokenizer adds them; a sentence pair
    with the tokenizer's own pair template, segments and token type ids."""
    if not text.strip():
        raise InputError("text is empty; type at least one word")
    if pair is not None and not pair.strip():
        raise InputError("the pair's second text is empty; type at least one word or leave it out")
    ids, warnings, enc = _tokenize(tokenizer, text, pair)
    _check_length(len(ids), limit, "text" if pair is None else "the pair", name)
    if pair is None:
        return Encoded(tuple(ids), _tokens(tokenizer, ids), tuple(warnings))
    types = enc.get("token_type_ids")
    return Encoded(
        tuple(ids), _tokens(tokenizer, ids), tuple(warnings), _segments(tokenizer, enc, ids),
        None if types is None else tuple(int(t) for t in types),
    )  # fmt: skip


def _segments(
    tokenizer: PreTrainedTokenizerBase, enc: BatchEncoding, ids: list[int]
) -> tuple[int, ...]:
    """0 for the first text (and the special tokens before the second), 1 from the second
    text's first token on: BertViz's sentence A and B."""
    types = enc.get("token_type_ids")
    if types is not None and any(types):
        return tuple(int(t) for t in types)
    if not getattr(tokenizer, "is_fast", False):
        raise InputError("this model's tokenizer cannot tell the two texts of a pair apart")
    sequence = enc.sequence_ids(0)
    start = next((k for k, s in enumerate(sequence) if s == 1), len(ids))
    return tuple(int(k >= start) for k in range(len(ids)))


def encode_target(
    tokenizer: PreTrainedTokenizerBase, target: str, limit: int, name: str, eos: int | None
) -> Encoded:
    """Target ids as the tokenizer makes labels, without the end token (appended by the caller)."""
    ids, warnings, _ = _tokenize(tokenizer, target, target=True, what="target")
    if ids and eos is not None and ids[-1] == eos:
        ids = ids[:-1]
    _check_length(len(ids) + 1, limit, "target", name)
    return Encoded(tuple(ids), _tokens(tokenizer, ids), tuple(warnings))


def encode_prompt(
    tokenizer: PreTrainedTokenizerBase, text: str, target: str | None, limit: int, name: str
) -> Encoded:
    """Decoder-only input: the start token when the model has one, TEXT, then TARGET if given."""
    if not text.strip():
        raise InputError("text is empty; type at least one word")
    ids, warnings, _ = _tokenize(tokenizer, text)
    bos = tokenizer.bos_token_id
    if bos is not None and (not ids or ids[0] != bos):
        ids = [bos, *ids]
    if target is not None:
        more, more_warnings, _ = _tokenize(tokenizer, target, specials=False, what="target")
        ids, warnings = ids + more, warnings + more_warnings
    _check_length(len(ids), limit, "text" if target is None else "text with target", name)
    return Encoded(tuple(ids), _tokens(tokenizer, ids), tuple(warnings))


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
    """Refuse a config whose special token ids fall outside the vocabulary, naming the id.
    Only ids attnlens feeds or stops on are checked: it never pads (configs such as the first
    Llama's name pad_token_id -1), and an encoder-only model generates nothing (ModernBERT's
    config names end and start ids of a larger vocabulary)."""
    if detect_architecture(model.config) == "encoder":
        return
    generation = getattr(model, "generation_config", None)
    sources = [model.config.get_text_config(), model.config, generation]
    for key in ("eos_token_id", "decoder_start_token_id", "forced_bos_token_id",
                "forced_eos_token_id", "bos_token_id"):  # fmt: skip
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
