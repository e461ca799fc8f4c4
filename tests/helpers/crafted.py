"""Broken and hostile model folders, built from tiny valid ones: each must load as a one-line
refusal (README, "Deploying for a class"), never a traceback or a huge allocation."""

from __future__ import annotations

import json
import pickle
import shutil
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from helpers.tiny import save_tiny_lm, save_tiny_model

Edit = Callable[[Path], None]


def _description(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "config.json").read_text())
    return data


def _write_description(folder: Path, data: object) -> None:
    (folder / "config.json").write_text(json.dumps(data))


def _set(path: tuple[str, ...], value: object) -> Edit:
    """Set one field of config.json (a path of keys) to value."""

    def edit(folder: Path) -> None:
        data = _description(folder)
        inner = data
        for key in path[:-1]:
            inner = inner[key]
        inner[path[-1]] = value
        _write_description(folder, data)

    return edit


def _drop(key: str) -> Edit:
    def edit(folder: Path) -> None:
        data = _description(folder)
        del data[key]
        _write_description(folder, data)

    return edit


def _set_both_vocabs(n: int) -> Edit:
    def edit(folder: Path) -> None:
        _set(("transformer", "src_vocab"), n)(folder)
        _set(("transformer", "tgt_vocab"), n)(folder)

    return edit


def _replace_config(text: str | bytes) -> Edit:
    def edit(folder: Path) -> None:
        path = folder / "config.json"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)

    return edit


def _weights(blob: bytes, name: str = "model.safetensors") -> Edit:
    def edit(folder: Path) -> None:
        (folder / "model.safetensors").unlink(missing_ok=True)
        (folder / name).write_bytes(blob)

    return edit


def _tensors(tensors: dict[str, torch.Tensor]) -> Edit:
    def edit(folder: Path) -> None:
        save_file(tensors, str(folder / "model.safetensors"))

    return edit


def _huge_header(folder: Path) -> None:
    """A header that claims a tensor of 10^12 floats in a file of a few bytes."""
    header = json.dumps(
        {"w": {"dtype": "F32", "shape": [1_000_000, 1_000_000], "data_offsets": [0, 4 * 10**12]}}
    ).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 8)


def _other_shapes(folder: Path) -> None:
    """Weights of a wider model under the same names: every shape mismatches."""
    from safetensors.torch import load_file

    weights = load_file(str(folder / "model.safetensors"))
    save_file({k: torch.zeros(*(2 * s for s in v.shape)) for k, v in weights.items()},
              str(folder / "model.safetensors"))  # fmt: skip


def _missing_tensor(folder: Path) -> None:
    from safetensors.torch import load_file

    weights = load_file(str(folder / "model.safetensors"))
    weights.pop(sorted(weights)[0])
    save_file(weights, str(folder / "model.safetensors"))


def _smaller_tokenizer(folder: Path) -> None:
    """The tokenizer knows 3 characters; the model's embedding has 13 rows."""
    data = _description(folder)
    data["tokenizer"] = {"kind": "char", "chars": "abc"}
    _write_description(folder, data)


def _pickle_weights(folder: Path) -> None:
    (folder / "model.safetensors").unlink()
    (folder / "model.bin").write_bytes(pickle.dumps({"w": [1.0, 2.0]}))


OWN: dict[str, Edit] = {
    "config is a list": _replace_config('["transformer", "tokenizer"]'),
    "config is a string": _replace_config('"transformer"'),
    "config is null": _replace_config("null"),
    "config is not JSON": _replace_config("{not json"),
    "config is not UTF-8": _replace_config(b'{"transformer": "\xff\xfe"}'),
    "config nested 100000 deep": _replace_config("[" * 100_000 + "]" * 100_000),
    "no tokenizer": _drop("tokenizer"),
    "tokenizer is a list": _set(("tokenizer",), ["a", "b"]),
    "tokenizer of unknown kind": _set(("tokenizer",), {"kind": "bpe"}),
    "tokenizer chars not text": _set(("tokenizer", "chars"), [1, 2]),
    "tokenizer repeats a character": _set(("tokenizer", "chars"), "aab"),
    "tokenizer smaller than the vocabulary": _smaller_tokenizer,
    "transformer is a list": _set(("transformer",), [1, 2]),
    "transformer field unknown": _set(("transformer", "bogus"), 1),
    "h=0": _set(("transformer", "h"), 0),
    "h negative": _set(("transformer", "h"), -4),
    "d_model not divisible by h": _set(("transformer", "h"), 3),
    "d_model is text": _set(("transformer", "d_model"), "16"),
    "N is 2.5": _set(("transformer", "N"), 2.5),
    "N is true": _set(("transformer", "N"), True),
    "dropout is text": _set(("transformer", "dropout"), "x"),
    "src_vocab=4e7": _set(("transformer", "src_vocab"), 4e7),
    "vocab 4e7 both": _set_both_vocabs(40_000_000),
    "max_len=1e10": _set(("transformer", "max_len"), 10_000_000_000),
    "N=1e7": _set(("transformer", "N"), 10_000_000),
    "d_ff=1e12": _set(("transformer", "d_ff"), 10**12),
    "max_source_len is text": _set(("max_source_len",), "many"),
    "architecture unknown": _set(("architecture",), "diffusion"),
    "task is a list": _set(("task",), ["reverse"]),
    "task is an object": _set(("task",), {"name": "reverse"}),
    "name is a number": _set(("name",), 7),
    "no weights": lambda f: (f / "model.safetensors").unlink(),
    "weights are a folder": lambda f: (
        (f / "model.safetensors").unlink(),
        (f / "model.safetensors").mkdir(),
        None,
    )[-1],
    "empty safetensors": _weights(b""),
    "corrupt safetensors": _weights(b"\x08\x00\x00\x00\x00\x00\x00\x00{garbage"),
    "safetensors with no tensors": _tensors({}),
    "safetensors header claims 4 TB": _huge_header,
    "shape mismatch": _other_shapes,
    "a tensor missing": _missing_tensor,
    "integer weights": lambda f: _tensors(
        {k: torch.zeros(v.shape, dtype=torch.int64) for k, v in _read(f).items()}
    )(f),
    "pickle weights": _pickle_weights,
}


def _read(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def _hf_set(**fields: object) -> Edit:
    def edit(folder: Path) -> None:
        data = _description(folder)
        data.update(fields)
        _write_description(folder, data)

    return edit


def _no_tokenizer(folder: Path) -> None:
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                 "vocab.txt"):  # fmt: skip
        (folder / name).unlink(missing_ok=True)


def _hf_corrupt_tokenizer(folder: Path) -> None:
    (folder / "tokenizer.json").write_text("{not json")


HF: dict[str, Edit] = {
    "hf config is a list": _replace_config('[{"model_type": "bert"}]'),
    "hf model_type unknown": _hf_set(model_type="nope"),
    "hf model_type not text": _hf_set(model_type=["bert"]),
    "hf num_attention_heads=0": _hf_set(num_attention_heads=0),
    "hf num_hidden_layers=100000": _hf_set(num_hidden_layers=100_000),
    "hf num_hidden_layers negative": _hf_set(num_hidden_layers=-1),
    "hf num_hidden_layers is text": _hf_set(num_hidden_layers="two"),
    "hf hidden_size=1e9": _hf_set(hidden_size=1_000_000_000),
    "hf vocab_size=4e9": _hf_set(vocab_size=4_000_000_000),
    "hf max_position_embeddings=1e10": _hf_set(max_position_embeddings=10_000_000_000),
    "hf intermediate_size=1e12": _hf_set(intermediate_size=10**12),
    "hf no tokenizer": _no_tokenizer,
    "hf corrupt tokenizer": _hf_corrupt_tokenizer,
    "hf empty safetensors": _weights(b""),
    "hf corrupt safetensors": _weights(b"\x08\x00\x00\x00\x00\x00\x00\x00{garbage"),
    "hf safetensors with no tensors": _tensors({}),
    "hf safetensors header claims 4 TB": _huge_header,
    "hf shape mismatch": _other_shapes,
    "hf pickle weights only": _pickle_weights,
}


def build_own(name: str, root: Path) -> Path:
    """One crafted folder of ours (a tiny encoder-decoder, or the tiny lm for the decoder-only
    cases), edited as OWN[name] says."""
    folder = root / name.replace(" ", "-").replace("/", "-")
    save_tiny_model(folder)
    OWN[name](folder)
    return folder


def build_hf(name: str, root: Path, source: Path) -> Path:
    """A copy of the tiny Hugging Face model folder `source`, edited as HF[name] says."""
    folder = root / name.replace(" ", "-").replace("/", "-")
    shutil.copytree(source, folder)
    HF[name](folder)
    return folder


__all__ = ["HF", "OWN", "build_hf", "build_own", "save_tiny_lm"]
