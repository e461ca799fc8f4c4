"""Records written piece by piece: JSON, CSV and NPZ in chunks of bounded size, so that writing
a record takes memory for one chunk, never for a second copy of the record in text.

JSON numbers from float32 arrays are written with the fewest digits that read back to the
same float32 (at most 9 significant digits): lossless, about half the length of Python's
float64 repr of the same value. Python floats (scores, settings) are written as `json` writes
them.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import IO, Any

import numpy as np
import pandas as pd

CHUNK_VALUES = 1 << 16  # numbers formatted at once: a few MB of text, whatever the record
NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}  # as json.dumps writes them
NUMBER_CHARS = 16  # the most a float32 takes in JSON or CSV, with its separator: -1.2345678e-05,
BOOL_CHARS = 6  # false,


def json_chunks(value: Any) -> Iterator[str]:
    """`value` as compact JSON text, in pieces; numpy arrays are written row by row."""
    if isinstance(value, np.ndarray):
        yield from _array_chunks(value)
    elif isinstance(value, Mapping):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ("," if i else "") + json.dumps(str(key)) + ":"
            yield from json_chunks(item)
        yield "}"
    elif isinstance(value, list | tuple):
        yield "["
        for i, item in enumerate(value):
            if i:
                yield ","
            yield from json_chunks(item)
        yield "]"
    elif isinstance(value, np.generic):
        yield json.dumps(value.item())
    else:
        yield json.dumps(value)


def _array_chunks(a: np.ndarray) -> Iterator[str]:
    """Nested JSON lists of an array, formatted CHUNK_VALUES numbers at a time."""
    if a.ndim == 0:
        yield "".join(_formatted(a.reshape(1)))
        return
    if a.ndim == 1:
        yield "[" + ",".join(_formatted(a)) + "]"
        return
    if a[0].size > CHUNK_VALUES:
        yield "["
        for i in range(a.shape[0]):
            yield ("," if i else "")
            yield from _array_chunks(a[i])
        yield "]"
        return
    rows_per_chunk = max(1, CHUNK_VALUES // max(1, a[0].size))
    yield "["
    for start in range(0, a.shape[0], rows_per_chunk):
        block = a[start : start + rows_per_chunk]
        yield ("," if start else "") + ",".join(_nested(block[i]) for i in range(len(block)))
    yield "]"


def _nested(a: np.ndarray) -> str:
    """One small array as nested JSON lists."""
    if a.ndim <= 1:
        return "[" + ",".join(_formatted(a.reshape(-1))) + "]"
    flat = _formatted(a.reshape(-1))
    return _group(flat, a.shape)


def _group(flat: list[str], shape: tuple[int, ...]) -> str:
    if len(shape) == 1:
        return "[" + ",".join(flat) + "]"
    step = int(np.prod(shape[1:]))
    parts = [_group(flat[i : i + step], shape[1:]) for i in range(0, len(flat), step)]
    return "[" + ",".join(parts) + "]"


def _formatted(a: np.ndarray) -> list[str]:
    """Each number of a 1-d array as JSON text."""
    if a.dtype == np.bool_:
        return ["true" if v else "false" for v in a.tolist()]
    if np.issubdtype(a.dtype, np.integer):
        return [str(v) for v in a.tolist()]
    if a.dtype in (np.float32, np.float16, np.float64):
        text: list[str] = a.astype(str).tolist()  # the shortest round trip of its type, in C
        if not np.isfinite(a).all():
            text = [NON_FINITE.get(t, t) for t in text]
        return text
    return [json.dumps(v) for v in a.tolist()]


def write_json(value: Any, handle: IO[str]) -> None:
    """`value` as JSON into an open text file, chunk by chunk, then a newline."""
    pending: list[str] = []
    size = 0
    for piece in json_chunks(value):
        pending.append(piece)
        size += len(piece)
        if size >= 1 << 20:
            handle.write("".join(pending))
            pending, size = [], 0
    handle.write("".join(pending) + "\n")


def frame_chunks(frames: Iterable[pd.DataFrame], columns: Sequence[str]) -> Iterator[str]:
    """CSV text of a long table given as successive pieces: the header, then each piece."""
    yield ",".join(columns) + "\n"
    for frame in frames:
        yield frame.to_csv(index=False, header=False, columns=list(columns))


def write_chunks(chunks: Iterable[str], handle: IO[str]) -> None:
    """Text pieces into an open file."""
    for piece in chunks:
        handle.write(piece)


def write_npz(
    arrays: Mapping[str, np.ndarray],
    meta: Mapping[str, Any],
    handle: IO[bytes],
    stored: Callable[[str], bool] = lambda name: False,
) -> None:
    """Arrays (and a JSON 'meta' entry) as a compressed .npz written straight into handle: one
    array at a time, compressed as it goes (what np.savez_compressed writes, without holding
    the archive in memory). Entries `stored` names are kept uncompressed: deflate gains nothing
    on dense float data such as queries and keys and would take longer than making them."""
    with zipfile.ZipFile(handle, mode="w", compression=zipfile.ZIP_DEFLATED) as archive:
        entries = {"meta": np.array(json.dumps(dict(meta))), **arrays}
        for name, array in entries.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=NPZ_TIME)
            info.compress_type = zipfile.ZIP_STORED if stored(name) else zipfile.ZIP_DEFLATED
            with archive.open(info, mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


NPZ_TIME = (1980, 1, 1, 0, 0, 0)  # what np.savez writes: the file's bytes follow its content


NPZ_ENTRY_BYTES = 1024  # the most one entry adds around its data: .npy header, zip headers


def npz_bound(arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> int:
    """At most how many bytes write_npz(arrays, meta) writes, counted without writing it:
    each array's bytes (deflate adds at most 5 bytes a 16 KB block to data it cannot
    shrink), the meta entry (numpy keeps its text as 4-byte characters), and every entry's
    headers."""
    sizes = [np.asanyarray(a).nbytes for a in arrays.values()] + [4 * json_bound(dict(meta))]
    return sum(n + n // (16 * 2**10) * 5 + NPZ_ENTRY_BYTES for n in sizes) + NPZ_ENTRY_BYTES


def megabytes(n_bytes: float) -> str:
    """A size for a message: '898 MB', '4.1 MB', '12 KB'."""
    mb = n_bytes / 2**20
    if mb < 1:
        return f"{max(1.0, n_bytes / 2**10):.0f} KB"
    return f"{mb:.0f} MB" if mb >= 10 else f"{mb:.1f} MB"


def file_size(handle: IO[Any]) -> int:
    """Bytes written so far to an open file."""
    handle.flush()
    return os.fstat(handle.fileno()).st_size


def plain(value: Any) -> Any:
    """A tree of dicts, lists and numpy arrays with every array as nested Python lists."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def json_bound(value: Any) -> int:
    """At most how many bytes json_chunks(value) writes, counted without writing it."""
    if isinstance(value, np.ndarray):
        per = BOOL_CHARS if value.dtype == np.bool_ else NUMBER_CHARS
        last = value.shape[-1] if value.ndim and value.shape[-1] else 1
        return value.size * per + 4 * (value.size // last + 1)
    if isinstance(value, Mapping):
        return 2 + sum(len(json.dumps(str(k))) + 2 + json_bound(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return 2 + sum(json_bound(v) + 1 for v in value)
    if isinstance(value, np.generic):
        return len(json.dumps(value.item()))
    return len(json.dumps(value))


def csv_cell_bytes(text: str) -> int:
    """Bytes a text cell takes in a CSV row, with its separator (quoted when it must be)."""
    raw = len(text.encode("utf-8"))
    if any(c in text for c in ',"\r\n'):
        raw += 2 + text.count('"')
    return raw + 1
