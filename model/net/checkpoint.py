"""Saving and loading bundled models: safetensors weights plus a JSON description, no pickle.

A folder is checked before anything is built: config.json must be a JSON object whose
"transformer" and "tokenizer" describe a model the tokenizer fits, small enough for the model
budget (ATTNLENS_MAX_MODEL_MB); the weights' header must name exactly the tensors that model
has, with the same shapes, in floating point. Anything else is a CheckpointError: one line
naming the folder, the file and what is wrong.
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_model, save_model
from torch import nn

from attnlens.model.budget import BYTES_PER_WEIGHT, check_layers, check_model_size
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.tokenizer import Tokenizer, tokenizer_from_dict
from attnlens.model.net.transformer import Transformer
from attnlens.record.errors import InputError

WEIGHTS, DESCRIPTION = "model.safetensors", "config.json"
MAX_DESCRIPTION_BYTES = 64 * 2**20  # a description with its loss curve is a few hundred KB
FLOAT_DTYPES = ("F32", "F16", "BF16")
ARCHITECTURES = ("encoder-decoder", "decoder")
TEXT_FIELDS = ("name", "task", "description", "architecture")  # strings when given
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")


class CheckpointError(InputError):
    """A model folder that cannot be loaded; the message says which file and why."""


@dataclass(frozen=True)
class Description:
    """What config.json says, checked: the network's sizes, its tokenizer, everything else."""

    config: TransformerConfig
    tokenizer: Tokenizer
    meta: dict[str, Any]

    @property
    def architecture(self) -> str:
        return str(self.meta.get("architecture", "encoder-decoder"))


def save(
    folder: Path, net: nn.Module, tok: Tokenizer, meta: dict[str, Any], half: bool = False
) -> None:
    """Write folder/model.safetensors and folder/config.json (float16 weights when half)."""
    folder.mkdir(parents=True, exist_ok=True)
    save_model(copy.deepcopy(net).half() if half else net, str(folder / WEIGHTS))
    config: TransformerConfig = net.config  # type: ignore[assignment]
    description = {"transformer": config.to_dict(), "tokenizer": tok.to_dict(), **meta}
    (folder / DESCRIPTION).write_text(json.dumps(description, indent=2, sort_keys=True) + "\n")


def read_description(folder: Path) -> dict[str, Any]:
    """config.json as a dict; a CheckpointError when it is missing, too large, not UTF-8, not
    JSON or not a JSON object."""
    path = folder / DESCRIPTION
    where = f"{folder.name}/{DESCRIPTION}"
    try:
        if path.stat().st_size > MAX_DESCRIPTION_BYTES:
            raise CheckpointError(f"{where} is larger than {MAX_DESCRIPTION_BYTES >> 20} MB")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{where} is missing") from None
    except (OSError, UnicodeDecodeError) as error:
        raise CheckpointError(
            f"{where} cannot be read as UTF-8 text ({_first_line(error)})"
        ) from None
    except json.JSONDecodeError as error:
        raise CheckpointError(
            f"{where} is not valid JSON ({error.msg}, line {error.lineno})"
        ) from None
    except RecursionError:
        raise CheckpointError(f"{where} nests lists or objects too deeply") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{where} holds a JSON {_json_kind(data)}, not an object")
    return data


def describe(folder: Path) -> Description:
    """config.json checked, and the model it describes checked against the model budget."""
    meta = read_description(folder)
    where = f"{folder.name}/{DESCRIPTION}"
    for key in ("transformer", "tokenizer"):
        if not isinstance(meta.get(key), dict):
            found = "missing" if key not in meta else f"a JSON {_json_kind(meta[key])}"
            raise CheckpointError(f"{where}: {key!r} must be a JSON object, but it is {found}")
    try:
        config = TransformerConfig.from_dict(meta["transformer"])
        tokenizer = tokenizer_from_dict(meta["tokenizer"])
    except (ValueError, TypeError, KeyError) as error:
        raise CheckpointError(f"{where}: {_first_line(error)}") from None
    for key in TEXT_FIELDS:  # read as names and looked up: a list would not even hash
        if key in meta and not isinstance(meta[key], str):
            raise CheckpointError(
                f"{where}: {key!r} must be a JSON string, but it is a JSON {_json_kind(meta[key])}"
            )
    architecture = meta.get("architecture", "encoder-decoder")
    if architecture not in ARCHITECTURES:
        raise CheckpointError(
            f"{where}: architecture {architecture!r} is not one of {', '.join(ARCHITECTURES)}"
        )
    check_layers(config.N, f"model {folder.name!r}")
    check_model_size(model_bytes(config, architecture), f"model {folder.name!r}")
    vocab = {config.src_vocab, config.tgt_vocab}
    if vocab != {len(tokenizer)}:
        raise CheckpointError(
            f"{where}: the tokenizer has {len(tokenizer)} tokens but the model's vocabulary "
            f"has {' and '.join(str(v) for v in sorted(vocab))}: they must be equal"
        )
    return Description(config, tokenizer, meta)


def model_bytes(config: TransformerConfig, architecture: str = "encoder-decoder") -> int:
    """Memory for the parameters and the positional table of a model of this config and
    architecture, float32: what it will take before it is built."""
    d, f, N = config.d_model, config.d_ff, config.N
    # one matrix when shared (§3.4; always, decoder-only); else source, target and projection
    embeddings = config.src_vocab * d + (0 if config.share_embeddings else 2 * config.tgt_vocab * d)
    if architecture == "decoder":
        embeddings = config.tgt_vocab * d
    feed_forward = 2 * d * f + f + d
    self_layer = 4 * (d * d + d) + feed_forward + 4 * d  # attention, FFN, two norms
    cross_layer = 8 * (d * d + d) + feed_forward + 6 * d  # two attentions, FFN, three norms
    layers = N * self_layer if architecture == "decoder" else N * (self_layer + cross_layer)
    table = config.max_len * d  # the sinusoidal positions, a buffer
    return (embeddings + config.tgt_vocab + layers + table) * BYTES_PER_WEIGHT


def load(
    folder: Path, device: torch.device, weights: Path | None = None
) -> tuple[Transformer, Tokenizer, dict[str, Any]]:
    """A model in eval mode, its tokenizer and its description, from a bundled folder."""
    description = describe(folder)
    net = Transformer(description.config)
    load_weights(net, weights or folder / WEIGHTS, device)
    return net, description.tokenizer, description.meta


def load_weights(net: nn.Module, path: Path, device: torch.device) -> None:
    """Fill net from a safetensors file (float32 or float16) and put it in eval mode on device;
    a CheckpointError when the file is missing, unreadable or holds other tensors."""
    where = f"{path.parent.name}/{path.name}"
    if path.suffix != ".safetensors":
        raise CheckpointError(f"refusing to load {where}: only .safetensors weights are accepted")
    if not path.is_file():
        state = "is not a file" if path.exists() else "is missing"
        pickles = sorted(p.name for p in path.parent.glob("*") if p.suffix in PICKLE_SUFFIXES)
        also = f" ({', '.join(pickles)} is never loaded: pickles can run code)" if pickles else ""
        raise CheckpointError(f"{where} {state}{also}")
    header = _header(path, where)
    _check_tensors(net, header, where)
    dtypes = {dtype for dtype, _ in header.values()}
    try:
        if dtypes & {"F16", "BF16"}:
            probe = copy.deepcopy(net).to(torch.bfloat16 if "BF16" in dtypes else torch.float16)
            load_model(probe, str(path), device="cpu")
            net.load_state_dict({k: v.float() for k, v in probe.state_dict().items()})
        else:
            load_model(net, str(path), device="cpu")
    except (SafetensorError, RuntimeError, OSError, ValueError) as error:
        raise CheckpointError(f"{where} cannot be loaded ({_first_line(error)})") from None
    net.to(device).eval()


def _header(path: Path, where: str) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Each tensor's dtype and shape, from the file's header (no tensor is read)."""
    try:
        with safe_open(str(path), framework="pt") as f:
            header = {
                name: (str(f.get_slice(name).get_dtype()), tuple(f.get_slice(name).get_shape()))
                for name in f.keys()  # noqa: SIM118 (safe_open is not a mapping)
            }
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:
        raise CheckpointError(
            f"{where} is not a readable safetensors file ({_first_line(error)})"
        ) from None
    if not header:
        raise CheckpointError(f"{where} holds no tensors")
    return header


def _check_tensors(
    net: nn.Module, header: dict[str, tuple[str, tuple[int, ...]]], where: str
) -> None:
    """The file must hold every tensor of net (one of each tied group), nothing else, with
    net's shapes, in floating point."""
    expected = net.state_dict()
    tied: dict[int, list[str]] = defaultdict(list)
    for name, tensor in expected.items():
        tied[tensor.data_ptr()].append(name)
    missing = [names[0] for names in tied.values() if not any(n in header for n in names)]
    unexpected = [name for name in header if name not in expected]
    wrong_type = [f"{n} ({t})" for n, (t, _) in header.items() if t not in FLOAT_DTYPES]
    reshaped = [
        f"{n} is {_shape(s)} but the config makes it {_shape(tuple(expected[n].shape))}"
        for n, (_, s) in header.items()
        if n in expected and s != tuple(expected[n].shape)
    ]
    problems = []
    if missing:
        problems.append(f"{len(missing)} tensors of the model are missing ({_few(missing)})")
    if unexpected:
        problems.append(f"{len(unexpected)} are not in the model ({_few(unexpected)})")
    if wrong_type:
        problems.append(f"weights must be floating point, not {_few(wrong_type)}")
    if reshaped:
        problems.append(_few(reshaped, 2))
    if problems:
        raise CheckpointError(f"{where} does not fit config.json: {'; '.join(problems)}")


def _shape(shape: tuple[int, ...]) -> str:
    return "×".join(map(str, shape)) or "a scalar"


def _few(names: list[str], n: int = 3) -> str:
    shown = ", ".join(names[:n])
    return shown + (f" and {len(names) - n} more" if len(names) > n else "")


def _json_kind(value: object) -> str:
    kinds = {list: "list", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
