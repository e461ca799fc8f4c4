"""Reading a Trace's optional fields back from its JSON or NPZ, and comparing its fields."""

from __future__ import annotations

import io
import mmap
import struct
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from attnlens.record import norms as carried
from attnlens.record import scores as kept
from attnlens.record import summary as glance


def same_value(a: Any, b: Any) -> bool:
    """Exact equality of two values of a record's field: arrays by their numbers, mappings
    and tuples item by item, a kind's layers of scores and its summary field by field."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if isinstance(a, kept.LayerScores):
        return isinstance(b, kept.LayerScores) and a.same(b)
    if isinstance(a, carried.HeadNorms):
        return isinstance(b, carried.HeadNorms) and a.same(b)
    if isinstance(a, glance.Summary):
        return isinstance(b, glance.Summary) and a.same(b)
    if isinstance(a, Mapping):
        return (
            isinstance(b, Mapping)
            and a.keys() == b.keys()
            and all(same_value(a[k], b[k]) for k in a)
        )
    if isinstance(a, tuple) and any(isinstance(x, kept.LayerScores) for x in a):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(same_value, a, b))
    return bool(a == b)


def array_of(value: Any, dtype: type) -> np.ndarray | None:
    return None if value is None else np.asarray(value, dtype=dtype)


def maybe_list(tokens: tuple[str, ...] | None) -> list[str] | None:
    return None if tokens is None else list(tokens)


def optional_in(data: dict[str, Any]) -> dict[str, Any]:
    """The optional fields of a record's JSON (or npz meta), as Trace keywords."""
    shown = data.get("shown_tokens") or {}
    layer_masks = data.get("layer_masks") or {}
    segments = data.get("src_segments")
    return {
        "positional_scheme": data.get("positional_scheme"),
        "src_shown": None if shown.get("src") is None else tuple(shown["src"]),
        "tgt_shown": None if shown.get("tgt") is None else tuple(shown["tgt"]),
        "layer_masks": {k: np.asarray(v, dtype=np.bool_) for k, v in layer_masks.items()} or None,
        "src_segments": None if segments is None else tuple(int(i) for i in segments),
        "scores": kept.from_parts(data["scores"]) if data.get("scores") else None,
        "summaries": glance.summaries_from(data["summaries"]) if data.get("summaries") else None,
        "norms": carried.norms_from(data["norms"]) if data.get("norms") else None,
        "norms_missing": data.get("norms_missing"),
    }


def summaries_in(z: Any) -> dict[str, glance.Summary] | None:
    """The summaries of an NPZ's `summary.KIND.FIELD` entries, if it has any."""
    tree: dict[str, dict[str, Any]] = {}
    for name in z.files:
        if name.startswith("summary."):
            _, kind, part = name.split(".")
            tree.setdefault(kind, {})[part] = z[name]
    return glance.summaries_from(tree) or None


class MappedNpz:
    """An NPZ file's arrays by name, as np.load's NpzFile gives them, where each entry kept
    uncompressed (a long record's queries and keys) is mapped from the file rather than read:
    a record of 200 MB reopened from disk costs pages touched, not three copies of it."""

    def __init__(self, path: Path) -> None:
        try:
            self._zip = zipfile.ZipFile(path)  # open until close(): the compressed entries
        except zipfile.BadZipFile as err:
            raise ValueError(f"{path} is not an NPZ file: {err}") from err
        with path.open("rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._infos = {i.filename[:-4]: i for i in self._zip.infolist()}
        self.files = [name for name, i in self._infos.items() if i.filename.endswith(".npy")]

    def __enter__(self) -> MappedNpz:
        return self

    def __exit__(self, *exc: object) -> None:
        self._zip.close()  # the mapped arrays keep the map, not the file, open

    def __contains__(self, name: object) -> bool:
        return name in self.files

    def __getitem__(self, name: str) -> np.ndarray:
        info = self._infos[name]
        if info.compress_type != zipfile.ZIP_STORED:
            with self._zip.open(info) as f:
                return np.lib.format.read_array(f, allow_pickle=False)
        head = self._map[info.header_offset : info.header_offset + 30]
        name_len, extra_len = struct.unpack("<HH", head[26:30])  # the local header's own
        start = info.header_offset + 30 + name_len + extra_len
        npy = io.BytesIO(self._map[start : start + 4096])  # an .npy header is at most 4 KB here
        major, _ = np.lib.format.read_magic(npy)
        read = (
            np.lib.format.read_array_header_1_0
            if major == 1
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = read(npy, max_header_size=4096)
        if dtype.hasobject:
            raise ValueError(f"{name} holds Python objects, which a record never does")
        count = int(np.prod(shape, dtype=np.int64))
        if count == 0:
            return np.empty(shape, dtype)
        flat = np.frombuffer(self._map, dtype, count, start + npy.tell())
        return flat.reshape(shape, order="F" if fortran else "C")
