"""Experiment results kept in SQLite: read back, keyed by weights and inputs, never fatal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from attnlens.analysis.experiments.cache import (
    MAX_ENTRIES,
    VERSION,
    ResultCache,
    cache_dir,
    cache_key,
)
from attnlens.analysis.experiments.catalog import run_experiment
from attnlens.model.lenses.registry import load
from attnlens.record.experiment import ExperimentResult


def small(i: int) -> ExperimentResult:
    heads = pd.DataFrame({"kind": ["decoder_self"], "layer": [0], "head": [0], "s": [float(i)]})
    return ExperimentResult("induction", "m", {"i": i}, heads)


def test_put_then_get_returns_the_same_record(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    assert cache.get("k") is None
    cache.put("k", small(3))
    got = cache.get("k")
    assert got is not None and got.to_json() == small(3).to_json()


def test_switched_off_unwritable_or_corrupt_caches_cost_nothing_but_time(tmp_path: Path) -> None:
    assert cache_dir({"ATTNLENS_CACHE_DIR": "off"}) is None
    assert cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/attnlens")
    off = ResultCache(None)
    off.put("k", small(1))
    assert off.get("k") is None
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    ResultCache(blocked).put("k", small(1))  # cannot create a folder there: skipped
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "experiments.sqlite").write_bytes(b"garbage" * 100)
    ResultCache(corrupt).put("k", small(1))
    assert ResultCache(corrupt).get("k") is None


def test_only_the_newest_entries_are_kept(tmp_path: Path) -> None:
    assert ResultCache(tmp_path).limit == MAX_ENTRIES == 500
    cache = ResultCache(tmp_path, limit=3)
    for i in range(5):
        cache.put(f"k{i}", small(i))
    kept = [i for i in range(5) if cache.get(f"k{i}") is not None]
    assert kept == [2, 3, 4]


def test_a_second_run_is_read_back_and_new_weights_are_recomputed(
    hand_lm_dir: Path, tmp_path: Path
) -> None:
    cache = ResultCache(tmp_path / "cache")
    lens = load(str(hand_lm_dir), device="cpu")
    first = run_experiment(lens, "induction", 4, 0, cache=cache)
    again = run_experiment(lens, "induction", 4, 0, cache=cache)
    assert not first.cached and again.cached
    assert again.result.to_json() == first.result.to_json()
    assert not run_experiment(lens, "induction", 5, 0, cache=cache).cached  # other inputs
    assert not run_experiment(lens, "induction", 4, 1, cache=cache).cached
    copy = tmp_path / "copy"
    shutil.copytree(hand_lm_dir, copy)
    weights = copy / "model.safetensors"
    blob = bytearray(weights.read_bytes())
    blob[-1] ^= 1  # other weights under the same name: not the cached result
    weights.write_bytes(bytes(blob))
    assert not run_experiment(load(str(copy), device="cpu"), "induction", 4, 0, cache=cache).cached
    assert cache_key("a", "f", {"n": 1}) != cache_key("a", "f", {"n": 2})


def test_a_result_from_before_the_kinds_took_the_records_names_is_computed_again(
    hand_lm_dir: Path, tmp_path: Path
) -> None:
    """Cache v2 kept pruning curves naming heads `decoder:0.1`; v3 names them `decoder_self:0.1`,
    and a v2 entry is never handed back."""
    cache = ResultCache(tmp_path / "cache")
    lens = load(str(hand_lm_dir), device="cpu")
    key = cache_key("importance", lens.fingerprint(), {"n": 2, "seed": 0})
    assert key.startswith(f"v{VERSION}|") and VERSION >= 3
    curve = pd.DataFrame({"heads_removed": [0, 1], "removed": ["", "decoder:0.1"]})
    stale = ExperimentResult("importance", lens.name, {"n": 2, "seed": 0}, small(0).heads,
                             tables={"pruning": curve})  # fmt: skip
    cache.put(key.replace(f"v{VERSION}|", "v2|", 1), stale)  # as v2 stored it
    fresh = run_experiment(lens, "importance", 2, 0, cache=cache)
    assert not fresh.cached
    removed = fresh.result.tables["pruning"]["removed"].iloc[1:]
    assert len(removed) == 4 and all(name.startswith("decoder_self:") for name in removed)
    assert set(fresh.result.heads["kind"]) == {"decoder_self"}
    assert run_experiment(lens, "importance", 2, 0, cache=cache).cached  # v3's own is kept
