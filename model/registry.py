"""Finding a model by name: the bundled ones, or a folder."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from model.checkpoint import DESCRIPTION, read_description
from model.device import pick_device
from model.errors import ModelNotFoundError
from model.lens import Lens
from model.seq2seq import Seq2SeqLens

BUNDLED_DIR = Path(__file__).parent / "bundled"


@dataclass(frozen=True)
class ModelEntry:
    """A model attnlens can load by name."""

    name: str
    architecture: str
    description: str
    source: str  # where it comes from: 'bundled', a package name, ...


def bundled_models() -> list[ModelEntry]:
    """The models shipped in the repository, by name."""
    entries = []
    for folder in sorted(p for p in BUNDLED_DIR.iterdir() if (p / DESCRIPTION).is_file()):
        meta = read_description(folder)
        entries.append(
            ModelEntry(
                folder.name,
                str(meta.get("architecture", "encoder-decoder")),
                str(meta.get("description", "")),
                "bundled",
            )
        )
    return entries


_lock = threading.Lock()


def load(name_or_path: str, device: str = "auto") -> Lens:
    """A bundled model by name, or our own model saved in a folder."""
    dev = pick_device(device)
    with _lock:  # loading is the one step that must not run twice at once
        bundled = BUNDLED_DIR / name_or_path
        if name_or_path and "/" not in name_or_path and (bundled / DESCRIPTION).is_file():
            return Seq2SeqLens(bundled, dev, name=name_or_path)
        folder = Path(name_or_path).expanduser()
        if (folder / DESCRIPTION).is_file() and "transformer" in read_description(folder):
            return Seq2SeqLens(folder, dev)
    known = ", ".join(e.name for e in bundled_models())
    raise ModelNotFoundError(
        f"no model {name_or_path!r}: not a bundled name ({known}) nor a folder holding a model"
    )
