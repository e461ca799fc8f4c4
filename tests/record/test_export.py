"""Records written piece by piece: the same text as a whole write, exact round trips, and
size bounds a front end can check before writing anything."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnlens.model.lenses.registry import load
from attnlens.record.decode import DecodeRun
from attnlens.record.export import json_bound, json_chunks, write_json
from attnlens.record.trace import FRAME_COLUMNS, ModelInfo, Trace


@pytest.fixture(scope="module")
def trace(tiny_model_dir: Path) -> Trace:
    return load(str(tiny_model_dir), device="cpu").trace('ab,c"a', target="hg\ng")


@pytest.fixture(scope="module")
def run(tiny_model_dir: Path) -> DecodeRun:
    return load(str(tiny_model_dir), device="cpu").decode("abca", "beam", beam_size=3, max_len=6)


def big_trace(S: int = 300, L: int = 2, H: int = 3, seed: int = 0) -> Trace:
    """An encoder-only record of random rows (each sums to 1), S tokens."""
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.ones(S), size=(L, H, S)).astype(np.float32)
    tokens = tuple(f"t{i}" for i in range(S))
    return Trace(
        ModelInfo("big", "encoder", L, H, 8), tokens, (), weights, None, None,
        np.ones((S, S), dtype=bool), None, None, None, None,
    )  # fmt: skip


def test_json_pieces_read_back_exactly(trace: Trace, run: DecodeRun) -> None:
    text = "".join(json_chunks(trace.json_tree()))
    assert text == trace.to_json()
    assert Trace.from_json(text).equals(trace)
    assert DecodeRun.from_json(run.to_json()).equals(run)


def test_write_json_writes_the_same_text_and_a_newline(run: DecodeRun) -> None:
    out = io.StringIO()
    write_json(run.json_tree(), out)
    assert out.getvalue() == run.to_json() + "\n"


def test_float32_numbers_take_their_shortest_exact_form() -> None:
    values = np.array([0.1, 1.0, 0.0, -2.5e-5, 1e-8, 3.4e38, np.nan, np.inf, -np.inf], np.float32)
    text = "".join(json_chunks({"w": values}))
    assert text == '{"w":[0.1,1.0,0.0,-2.5e-05,1e-08,3.4e+38,NaN,Infinity,-Infinity]}'
    back = np.asarray(json.loads(text)["w"], dtype=np.float32)
    np.testing.assert_array_equal(back, values)  # nan == nan here


def test_a_long_array_is_written_in_many_pieces_of_bounded_size() -> None:
    a = np.random.default_rng(1).random((3, 200, 700)).astype(np.float32)  # 420k numbers
    pieces = list(json_chunks(a))
    assert len(pieces) > 3 and max(map(len, pieces)) < 2_000_000
    np.testing.assert_array_equal(np.asarray(json.loads("".join(pieces)), np.float32), a)


def test_csv_pieces_equal_the_whole_table(trace: Trace) -> None:
    whole = trace.to_frame().to_csv(index=False)
    assert "".join(trace.csv_chunks()) == whole
    one = trace.to_frame("cross", 1, 0)
    assert len(one) == trace.cross.shape[2] * trace.cross.shape[3]  # type: ignore[union-attr]
    assert set(one["kind"]) == {"cross"} and set(one["layer"]) == {1} and set(one["head"]) == {0}
    assert "".join(trace.csv_chunks("cross", 1, 0)) == one.to_csv(index=False)
    back = pd.read_csv(io.StringIO(whole), keep_default_na=False)
    assert list(back.columns) == list(FRAME_COLUMNS)


def test_frame_pieces_are_bounded_and_ordered() -> None:
    tr = big_trace(S=300)
    pieces = list(tr.frame_pieces(rows=1000))
    assert max(len(p) for p in pieces) <= 1000 and len(pieces) > 100
    whole = pd.concat(pieces, ignore_index=True)
    assert whole[["layer", "head", "query", "key"]].to_numpy().tolist()[:3] == [
        [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 2],
    ]  # fmt: skip
    np.testing.assert_array_equal(whole["weight"].to_numpy(), tr.encoder_self.ravel())  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "selection", [{}, {"kind": "cross"}, {"kind": "decoder_self", "layer": 1, "head": 1}]
)
def test_size_bounds_hold_and_are_close(trace: Trace, selection: dict[str, object]) -> None:
    actual = len("".join(trace.csv_chunks(**selection)).encode())  # type: ignore[arg-type]
    bound = trace.csv_bound(**selection)  # type: ignore[arg-type]
    assert actual <= bound <= 1.5 * actual


def test_json_bound_holds(trace: Trace, run: DecodeRun) -> None:
    for record in (trace, run, big_trace(S=120)):
        actual = len(record.to_json())
        assert actual <= json_bound(record.json_tree()) <= 2 * actual


def test_npz_written_into_a_file_reads_back(tmp_path: Path, trace: Trace) -> None:
    path = tmp_path / "t.npz"
    with path.open("wb") as handle:
        trace.write_npz(handle)
    assert Trace.from_npz(path.read_bytes()).equals(trace)
    with np.load(path) as z:
        assert set(z.files) >= {"meta", "encoder_self", "cross", "decoder_self_mask"}


def test_npz_bound_holds_for_data_deflate_cannot_shrink(trace: Trace) -> None:
    noise = big_trace(S=200)
    random_bits = np.random.default_rng(1).integers(0, 2**32, size=noise.encoder_self.shape)
    noise = Trace(  # float32 of random bits: deflate stores them, and adds its block headers
        noise.model, noise.src_tokens, (), random_bits.astype(np.uint32).view(np.float32),
        None, None, noise.encoder_self_mask, None, None, None, None,
    )  # fmt: skip
    for record in (trace, big_trace(S=200), noise):
        actual = len(record.to_npz())
        raw = sum(a.nbytes for a in record._arrays().values() if a is not None)
        assert actual <= record.npz_bound() <= raw * 1.01 + 64 * 2**10
